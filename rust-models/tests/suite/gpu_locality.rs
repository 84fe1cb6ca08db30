//! Per-page chiplet locality through the GPU model: a structure's remote ratio split into
//! the sharing no 64 KB placement avoids (its floor) and what misplaced pages add.

use crate::gpu_support;

use gpu_support::run;
use mcmvm_models::driver::PolicyKind;
use mcmvm_models::workload::by_name;

#[test]
fn a_stencils_remote_ratio_is_its_halo_floor_plus_what_misplaced_pages_add() {
    // Parboil's 7-point stencil, 3 planes (scale 0.1, seed 1): grid_a is first touched by
    // reads that reach the neighbours' halo rows, grid_b by each row's own writes.
    let w = by_name("ste", 0.1, 1).expect("ste builds");
    let r = run(w.as_ref(), PolicyKind::S64k);
    for a in &r.allocs {
        let l = &a.locality;
        assert!(l.pages > 0, "{}: accessed", a.name);
        // Every page is accessed mainly by one chiplet (its slice of rows).
        assert_eq!(l.chiplet_locality, 1.0, "{}: {l:?}", a.name);
        // A page living on its busiest chiplet is remote by exactly its floor; a misplaced
        // one by more, but never by more than all its accesses.
        assert!(a.remote_ratio >= l.floor_64k - 1e-12, "{}: {l:?}", a.name);
        assert!(
            a.remote_ratio <= l.floor_64k + l.misplaced_line_share + 1e-12,
            "{}: remote {} {l:?}",
            a.name,
            a.remote_ratio
        );
        if l.misplaced_pages == 0 {
            assert!((a.remote_ratio - l.floor_64k).abs() < 1e-12, "{}", a.name);
        }
        // 64 KB pages: the page size's floor is the 64 KB floor.
        assert_eq!(l.floor_region, l.floor_64k);
    }
    let b = r
        .allocs
        .iter()
        .find(|a| a.name == "grid_b")
        .expect("grid_b");
    assert_eq!(
        b.locality.misplaced_pages, 0,
        "each row's own writes touch grid_b first"
    );
    // The floor is the halo: rows y-1 and y+1 of the neighbours' slices, one row in 32 of
    // a 64 KB page, read once per plane.
    assert!(b.locality.floor_64k > 0.0 && b.locality.floor_64k < 0.01);
    let (sim, loc) = (r.rt_similarity.expect("RT saw walks"), r.chiplet_locality);
    assert!((0.0..=1.0).contains(&sim), "{sim}");
    assert_eq!(loc, Some(1.0));
}

#[test]
fn a_region_coarser_than_the_chiplets_slices_has_a_floor_of_the_other_slices() {
    // lps: each chiplet's slice of a 256 KB plane is one 64 KB page, so one home per 256 KB
    // region leaves the three other chiplets' accesses remote: a floor near 3/4.
    let w = by_name("lps", 0.05, 1).expect("lps builds");
    let r = run(w.as_ref(), PolicyKind::S256k);
    for a in &r.allocs {
        let l = &a.locality;
        assert!(l.floor_64k < 0.01, "{}: {l:?}", a.name);
        assert!((l.floor_region - 0.75).abs() < 0.01, "{}: {l:?}", a.name);
        assert!(a.remote_ratio >= l.floor_region - 1e-12, "{}", a.name);
    }
}
