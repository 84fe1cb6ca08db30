//! Layer-by-layer deep-learning footprints shaped like AlexNet, ResNet-50, BERT-base and
//! Whisper-base (the Forest paper's real-world workloads).
//!
//! Every weight tensor and every activation is its own object (as a framework allocates
//! them). Each layer is one kernel that streams its input activations and its weights and
//! writes its output activation (LS objects); attention kernels additionally gather rows of
//! the key/value activations (and the decoder's cross-attention gathers rows of the encoder
//! output), which is the dense irregular (HCHI) part Forest finds in Transformers. The grid of
//! a layer is sized by its traffic (about 64 lines per warp). The whole sequence runs twice
//! (two batches), so every layer kernel repeats, as SpecForest's pattern recording needs.
//!
//! Shapes at scale 1: AlexNet batch 16 fp32, ResNet-50 batch 4 fp32, BERT-base batch 2 ×
//! 224 tokens fp16, Whisper-base 750 audio frames / 224 text tokens fp16. `--scale`
//! multiplies every object's size (and so the traffic).
//!
//! **SpecForest's compiler hints** ([`Net::hints`]) are what a static pass over these
//! kernels finds, per allocation (the `cudaMallocManaged` flag extension):
//! - a **stride hint** (1 page: unit-stride, consecutive pages) on every object whose
//!   every access, in every kernel, is affine in the thread index — the streamed weights
//!   and activations (`x[base(warp) + i * 32 + lane]`);
//! - **similarity group 0** on every object some kernel gathers with the attention index
//!   expression (`kv[row(score) * d + lane]`, the same expression in every attention
//!   kernel): such an object has no stride hint, and the class the detector finds for one
//!   member is given to the others.
//!
//! Per network (objects at any scale; checked by a test):
//! - **AlexNet** (17 objects): every access is a stream, so all 17 carry stride hints; no
//!   gathers, no similarity group.
//! - **ResNet-50** (101 objects): all streams, all 101 hinted; no similarity group.
//! - **BERT-base** (121 objects): each encoder layer's `qkv.out` is gathered by its `scores`
//!   and `context` kernels → 12 objects in group 0; the other 109 hinted.
//! - **Whisper-base** (158 objects): the 12 `qkv.out` objects (6 encoder, 6 decoder layers)
//!   and the encoder output the decoder's cross-attention gathers (`enc5.ffn2.out`) → 13
//!   objects in group 0; the other 145 hinted.

use super::phases::{Class, Phase, PhaseGen, WARPS};
use super::program::{check_scale, grid_u32, Program};
use super::{Allocation, Workload, WorkloadError};

/// Names of the DL workloads.
pub(crate) const NAMES: [&str; 4] = ["alexnet", "resnet50", "bert", "whisper"];

/// Passes over the network.
const BATCHES: usize = 2;
/// Bytes of traffic per warp that size a layer's grid.
const TRAFFIC_PER_WARP: u64 = 64 * 128;
/// Gathers per warp of an attention kernel into its key/value object.
const ATTENTION_GATHERS: u64 = 16;
/// SpecForest: the stride hint of a streamed tensor (unit stride: consecutive pages).
const UNIT_STRIDE_PAGES: u64 = 1;
/// SpecForest: the similarity group of the objects attention kernels gather.
const ATTENTION_GROUP: u32 = 0;

struct Net {
    name: &'static str,
    scale: f64,
    allocations: Vec<Allocation>,
    bytes: Vec<u64>,
    phases: Vec<Phase>,
    error: Option<WorkloadError>,
}

impl Net {
    fn new(name: &'static str, scale: f64) -> Self {
        Net {
            name,
            scale,
            allocations: Vec::new(),
            bytes: Vec::new(),
            phases: Vec::new(),
            error: None,
        }
    }

    /// Declare an object of `elems` elements of `elem` bytes (at scale 1).
    fn obj(&mut self, name: impl Into<String>, elems: u64, elem: u64) -> u16 {
        let b = ((elems * elem) as f64 * self.scale / 128.0).ceil().max(1.0) as u64 * 128;
        self.allocations.push(Allocation::new(name, b));
        self.bytes.push(b);
        (self.bytes.len() - 1) as u16
    }

    /// A kernel streaming `reads`, gathering from `gathers`, writing `out`.
    fn kernel(&mut self, name: impl Into<String>, reads: &[u16], gathers: &[u16], out: u16) {
        let traffic: u64 = reads
            .iter()
            .chain([&out])
            .map(|&a| self.bytes[a as usize])
            .sum();
        let grid = traffic.div_ceil(TRAFFIC_PER_WARP * WARPS).max(1);
        let grid = match grid_u32(self.name, self.scale, grid) {
            Ok(g) => g,
            Err(e) => {
                self.error.get_or_insert(e);
                1
            }
        };
        let mut touches: Vec<(u16, Class)> = reads
            .iter()
            .map(|&a| (a, Class::Stream { write: false }))
            .collect();
        touches.extend(gathers.iter().map(|&a| {
            (
                a,
                Class::Dense {
                    per_warp: ATTENTION_GATHERS,
                },
            )
        }));
        touches.push((out, Class::Stream { write: true }));
        self.phases.push(Phase {
            name: name.into(),
            grid,
            touches,
        });
    }

    /// A weighted layer: `input` × weights → new activation `out_elems`.
    fn layer(
        &mut self,
        name: &str,
        input: u16,
        weight_elems: u64,
        out_elems: u64,
        elem: u64,
    ) -> u16 {
        let w = self.obj(format!("{name}.w"), weight_elems, elem);
        let out = self.obj(format!("{name}.out"), out_elems, elem);
        self.kernel(name, &[input, w], &[], out);
        out
    }

    /// A Transformer block: QKV projection, scores, softmax, context, output projection and
    /// the two FFN layers; `memory` is the encoder output for cross-attention.
    fn transformer(
        &mut self,
        name: &str,
        x: u16,
        t: u64,
        d: u64,
        heads: u64,
        cross: Option<(u16, u64)>,
    ) -> u16 {
        let e = 2; // fp16
        let qkv = self.layer(&format!("{name}.qkv"), x, d * 3 * d, t * 3 * d, e);
        let scores = self.obj(format!("{name}.scores"), heads * t * t, e);
        self.kernel(format!("{name}.scores"), &[qkv], &[qkv], scores);
        self.kernel(format!("{name}.softmax"), &[scores], &[], scores);
        let ctx = self.obj(format!("{name}.ctx"), t * d, e);
        self.kernel(format!("{name}.context"), &[scores], &[qkv], ctx);
        let mut h = self.layer(&format!("{name}.proj"), ctx, d * d, t * d, e);
        if let Some((mem, tm)) = cross {
            let q = self.layer(&format!("{name}.xq"), h, d * d, t * d, e);
            let xs = self.obj(format!("{name}.xscores"), heads * t * tm, e);
            self.kernel(format!("{name}.xscores"), &[q], &[mem], xs);
            let xc = self.obj(format!("{name}.xctx"), t * d, e);
            self.kernel(format!("{name}.xcontext"), &[xs], &[mem], xc);
            h = self.layer(&format!("{name}.xproj"), xc, d * d, t * d, e);
        }
        let f1 = self.layer(&format!("{name}.ffn1"), h, d * 4 * d, t * 4 * d, e);
        self.layer(&format!("{name}.ffn2"), f1, 4 * d * d, t * d, e)
    }

    /// SpecForest's hints, as a compiler pass over the kernels finds them (module docs): a
    /// gathered object joins similarity group 0, every other one gets a unit stride hint.
    fn hints(&mut self) {
        let gathered = |a: u16| {
            self.phases.iter().any(|p| {
                p.touches
                    .iter()
                    .any(|&(o, c)| o == a && matches!(c, Class::Dense { .. }))
            })
        };
        let gathered: Vec<bool> = (0..self.allocations.len() as u16).map(gathered).collect();
        for (alloc, g) in self.allocations.iter_mut().zip(gathered) {
            *alloc = if g {
                alloc.clone().in_group(ATTENTION_GROUP)
            } else {
                alloc.clone().with_stride(UNIT_STRIDE_PAGES)
            };
        }
    }

    fn finish(
        mut self,
        description: String,
        seed: u64,
    ) -> Result<Box<dyn Workload>, WorkloadError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.hints();
        let one_pass = self.phases;
        let phases: Vec<Phase> = (0..BATCHES)
            .flat_map(|_| one_pass.iter().cloned())
            .collect();
        let gen = PhaseGen {
            bytes: self.bytes,
            phases,
            seed,
        };
        Ok(Box::new(Program {
            name: self.name.to_string(),
            description,
            allocations: self.allocations,
            kernels: gen.kernels(),
            gen,
        }))
    }
}

/// Build one of the DL workloads.
pub(crate) fn build(
    name: &str,
    scale: f64,
    seed: u64,
) -> Option<Result<Box<dyn Workload>, WorkloadError>> {
    let name: &'static str = NAMES.iter().find(|&&n| n == name)?;
    if let Err(e) = check_scale(name, scale) {
        return Some(Err(e));
    }
    let mut net = Net::new(name, scale);
    let what = match name {
        "alexnet" => alexnet(&mut net),
        "resnet50" => resnet50(&mut net),
        "bert" => bert(&mut net),
        _ => whisper(&mut net),
    };
    let objects = net.allocations.len();
    let layers = net.phases.len();
    Some(net.finish(
        format!("{what}: {objects} objects, {layers} kernels per pass, {BATCHES} passes"),
        seed,
    ))
}

/// AlexNet: streams only; every object stride-hinted, no similarity group.
fn alexnet(net: &mut Net) -> &'static str {
    let b = 16;
    let e = 4;
    let x = net.obj("input", b * 3 * 227 * 227, e);
    // (name, weights, output elements per image)
    let layers: [(&str, u64, u64); 8] = [
        ("conv1", 96 * 3 * 11 * 11, 96 * 27 * 27),
        ("conv2", 256 * 96 * 5 * 5, 256 * 13 * 13),
        ("conv3", 384 * 256 * 9, 384 * 13 * 13),
        ("conv4", 384 * 384 * 9, 384 * 13 * 13),
        ("conv5", 256 * 384 * 9, 256 * 6 * 6),
        ("fc6", 9216 * 4096, 4096),
        ("fc7", 4096 * 4096, 4096),
        ("fc8", 4096 * 1000, 1000),
    ];
    let mut h = x;
    for (n, w, out) in layers {
        h = net.layer(n, h, w, b * out, e);
    }
    "AlexNet inference, batch 16, fp32 (conv layers with pooling folded in)"
}

/// ResNet-50: streams only; every object stride-hinted, no similarity group.
fn resnet50(net: &mut Net) -> &'static str {
    let b = 4;
    let e = 4;
    let x = net.obj("input", b * 3 * 224 * 224, e);
    let mut h = net.layer("conv1", x, 64 * 3 * 49, b * 64 * 56 * 56, e);
    let mut ch = 64;
    // (blocks, bottleneck width, spatial size)
    for (s, &(blocks, mid, hw)) in [
        (3u64, 64u64, 56u64),
        (4, 128, 28),
        (6, 256, 14),
        (3, 512, 7),
    ]
    .iter()
    .enumerate()
    {
        for blk in 0..blocks {
            let p = format!("s{}b{}", s + 1, blk);
            let a = net.layer(&format!("{p}.conv_a"), h, ch * mid, b * mid * hw * hw, e);
            let c = net.layer(
                &format!("{p}.conv_b"),
                a,
                mid * mid * 9,
                b * mid * hw * hw,
                e,
            );
            h = net.layer(
                &format!("{p}.conv_c"),
                c,
                mid * 4 * mid,
                b * 4 * mid * hw * hw,
                e,
            );
            ch = 4 * mid;
        }
    }
    net.layer("fc", h, 2048 * 1000, b * 1000, e);
    "ResNet-50 inference, batch 4, fp32 (bottleneck blocks, downsampling folded in)"
}

/// BERT-base: the 12 gathered `qkv.out` objects form similarity group 0, the rest are
/// stride-hinted.
fn bert(net: &mut Net) -> &'static str {
    let (t, d, heads) = (2 * 224, 768, 12);
    let mut h = net.obj("embeddings", t * d, 2);
    for l in 0..12 {
        h = net.transformer(&format!("enc{l}"), h, t, d, heads, None);
    }
    "BERT-base encoder, batch 2 x 224 tokens, fp16, attention as dense gathers"
}

/// Whisper-base: the 12 `qkv.out` objects and the cross-attention memory form similarity
/// group 0, the rest are stride-hinted.
fn whisper(net: &mut Net) -> &'static str {
    let (d, heads, ta, tt) = (512, 8, 750, 224);
    let mut h = net.obj("mel_features", ta * d, 2);
    for l in 0..6 {
        h = net.transformer(&format!("enc{l}"), h, ta, d, heads, None);
    }
    let memory = h;
    let mut y = net.obj("tokens", tt * d, 2);
    for l in 0..6 {
        y = net.transformer(&format!("dec{l}"), y, tt, d, heads, Some((memory, ta)));
    }
    "Whisper-base encoder (750 frames) + decoder (224 tokens), fp16, self- and cross-attention"
}

#[cfg(test)]
mod tests {
    /// The hints the module docs list, per network: (objects, in group 0); every other
    /// object carries a unit stride hint and no group.
    #[test]
    fn each_network_carries_the_documented_hints() {
        for (name, objects, grouped) in [
            ("alexnet", 17, 0),
            ("resnet50", 101, 0),
            ("bert", 121, 12),
            ("whisper", 158, 13),
        ] {
            let w = super::build(name, 0.01, 1)
                .expect("a DL name")
                .expect("builds");
            let a = w.allocations();
            assert_eq!(a.len(), objects, "{name}");
            let group: Vec<&str> = a
                .iter()
                .filter(|o| o.similarity_group == Some(super::ATTENTION_GROUP))
                .map(|o| o.name.as_str())
                .collect();
            assert_eq!(group.len(), grouped, "{name}: {group:?}");
            for o in a {
                let hinted = o.stride_hint == Some(super::UNIT_STRIDE_PAGES);
                assert_ne!(hinted, o.similarity_group.is_some(), "{name} {}", o.name);
            }
            if name == "whisper" {
                assert!(group.contains(&"enc5.ffn2.out") && group.contains(&"dec5.qkv.out"));
            }
        }
    }
}
