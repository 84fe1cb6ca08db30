//! A run's simulated figures, for comparing runs whose blocks different engines served
//! (`--hw`): its JSON report without host timing, speed and engine names — the only fields
//! that may differ when the simulation is the same.

/// Keys removed at every depth.
const HOST_FIELDS: [&str; 11] = [
    "sim_seconds",
    "speed",
    "wall_s",
    "service_wall_s",
    "instr_per_s",
    "engine",
    "stepped",
    "compared",
    "reference_checked",
    "att_engine",
    "repeated_after",
];

/// `report` as JSON without [`HOST_FIELDS`] (Null if it does not serialise).
pub fn simulated_figures(report: &impl serde::Serialize) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap_or_default();
    strip(&mut v);
    v
}

fn strip(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for k in HOST_FIELDS {
                m.remove(k);
            }
            m.values_mut().for_each(strip);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_fields_go_at_every_depth_and_the_rest_stays() {
        let v = serde_json::json!({"cycles": 5, "speed": 1.0,
            "hardware": {"engine": "check", "blocks": [{"block_cycles": 3, "engine": {"compared": 3}}]}});
        let s = super::simulated_figures(&v);
        assert_eq!(
            s,
            serde_json::json!({"cycles": 5, "hardware": {"blocks": [{"block_cycles": 3}]}})
        );
    }
}
