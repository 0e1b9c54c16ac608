//! What the study model asks of every workload's size type, and the macro that turns the list of
//! workloads (`size.rs`, the one registry) into the `Workload` and `Size` enums and the two
//! dispatch macros every layer uses instead of matching on the kind.

use std::collections::BTreeMap;

/// A workload's size type, as the study model uses it whatever the workload.
pub(crate) trait SizeKind {
    /// Server settings for this size, on top of the study's.
    fn server(&self) -> &BTreeMap<String, String>;
    /// The ranges the type cannot say (a scale model is checked once resolved).
    fn check(&self) -> anyhow::Result<()>;
    /// The article size this one is a scale model of, if it is one.
    fn scale_from(&self) -> Option<&str> {
        None
    }
}

/// `workloads!($ Variant(SizeType) = "name"; …)`: the `Workload` kind (the study file's
/// `workload:` value is the name), the `Size` enum (written flat, as meta.json's `size_spec`),
/// and `each_size!` / `each_workload!`, which run one expression for whichever workload it is.
/// The leading `$` lets the generated macros have metavariables of their own.
macro_rules! workloads {
    ($d:tt $($(#[$doc:meta])* $V:ident($T:ty) = $name:literal;)*) => {
        /// Which workload a study runs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub enum Workload {
            $($(#[$doc])* #[serde(rename = $name)] $V,)*
        }

        impl Workload {
            /// The name the study file gives it (`workload: <name>`).
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Workload::$V => $name,)*
                }
            }
        }

        /// A size of a study: which workload's parameters it holds is the study's `workload:`.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Size {
            $($V($T),)*
        }

        impl Size {
            /// The size as the study model sees every workload's.
            pub(crate) fn kind(&self) -> &dyn $crate::study::kind::SizeKind {
                match self {
                    $(Size::$V(s) => s,)*
                }
            }

            /// Server settings for this size, on top of the study's.
            pub(crate) fn server(&self) -> &std::collections::BTreeMap<String, String> {
                self.kind().server()
            }

            /// Parses a size of `workload` (a study file's YAML, meta.json's `size_spec`).
            pub(crate) fn parse<'de, D: serde::Deserializer<'de>>(
                workload: Workload,
                d: D,
            ) -> Result<Size, D::Error> {
                use serde::Deserialize;
                Ok(match workload {
                    $(Workload::$V => Size::$V(<$T>::deserialize(d)?),)*
                })
            }
        }

        /// Written flat (the workload is named beside it).
        impl serde::Serialize for Size {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Size::$V(x) => x.serialize(s),)*
                }
            }
        }

        /// `each_size!(size, s => expr)`: `expr` with `s` the size inside, whatever its workload
        /// (a trait the size types implement gives `expr` its meaning).
        macro_rules! each_size {
            ($d size:expr, $d s:ident => $d body:expr) => {
                match $d size {
                    $($crate::study::Size::$V($d s) => $d body,)*
                }
            };
        }
        pub(crate) use each_size;

        /// `each_workload!(workload, W => expr)`: `expr` with `W` the workload's size type.
        macro_rules! each_workload {
            ($d w:expr, $d W:ident => $d body:expr) => {
                match $d w {
                    $($crate::study::Workload::$V => {
                        type $d W = $T;
                        $d body
                    })*
                }
            };
        }
        pub(crate) use each_workload;
    };
}
pub(crate) use workloads;
