//! TPROC-C's size: warehouses, virtual users, timing, the profile, and its scale model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::study::bounds;
use crate::study::kind::SizeKind;

/// Study 000: HammerDB-compatible TPC-C. Every field may be left out of a scale model, which
/// takes them from its article size (`scale.rs`); `tprocc::Shape::of` checks the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TproccSize {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) warehouses: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rampup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duration_s: Option<f64>,
    /// Seconds between statistics snapshots during `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot_every_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<Profile>,
    /// HammerDB's "use all warehouses": each VU spreads over a list of warehouses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) all_warehouses: Option<bool>,
    /// Server settings for this size, on top of the study's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) server: BTreeMap<String, String>,
    /// Article sizes: new orders per warehouse per minute the article's default arm ran (its
    /// churn), the time base of a scale model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nopm_per_warehouse: Option<f64>,
    /// The RAM of the machine this size stands for. `run` confines a server on this machine to
    /// it (page cache included) where the platform allows; a scale model scales it as bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ram: Option<String>,
    /// A scale model of an article size (see `scale.rs` and docs/scale-models.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scale: Option<Scale>,
}

impl SizeKind for TproccSize {
    fn server(&self) -> &BTreeMap<String, String> {
        &self.server
    }

    fn check(&self) -> anyhow::Result<()> {
        let Some(warehouses) = self.warehouses else {
            anyhow::bail!("tprocc sizes need warehouses");
        };
        if warehouses < 1 {
            anyhow::bail!("warehouses must be at least 1 (got {warehouses})");
        }
        if self.vus == Some(0) {
            anyhow::bail!("vus must be at least 1");
        }
        if let Some(d) = self.duration_s {
            bounds::seconds("duration_s", d, 1.0)?;
        }
        if let Some(r) = self.rampup_s {
            bounds::seconds("rampup_s", r, 0.0)?;
        }
        bounds::snapshot_every(self.snapshot_every_s)?;
        let duration = self.duration_s.unwrap_or(60.0);
        if let Some(e) = self.snapshot_every_s.filter(|e| *e > duration) {
            eprintln!(
                "hotlab: warning: snapshot_every_s ({e}) is longer than the measured window ({duration} s); \
                 only the begin and end samples will be taken"
            );
        }
        Ok(())
    }

    fn scale_from(&self) -> Option<&str> {
        self.scale.as_ref().map(|s| s.from.as_str())
    }
}

/// The TPROC-C transaction profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Profile {
    /// HammerDB's update column set and 10/10/1/1/1 mix, uniform ids; two defects fixed.
    #[default]
    Hammerdb,
    /// The full TPC-C updates, NURand ids, 45/43/4/4/4.
    Spec,
}

impl Profile {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Profile::Hammerdb => "hammerdb",
            Profile::Spec => "spec",
        }
    }
}

/// `scale:` in a size of the study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scale {
    /// The article size this one is a scale model of.
    pub(crate) from: String,
    /// Warehouses of the model: bytes scale by warehouses / the article size's warehouses.
    pub(crate) warehouses: i64,
    /// New orders per warehouse per minute this machine sustains at the model's size; the time
    /// factor is the article size's `nopm_per_warehouse` divided by this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nopm_per_warehouse: Option<f64>,
    /// The time factor itself, instead of `nopm_per_warehouse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) time_factor: Option<f64>,
}
