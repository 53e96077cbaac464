//! [`Weight`]: a server's checked weight in the fair shares of a total budget.

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};

/// A server's weight in the fair shares of a total budget: a finite
/// number in `0.001..=1000` ([`Weight::MIN`], [`Weight::MAX`]), checked
/// where it is read, so [`Policy::weight`](crate::Policy::weight) never has to clamp it.
///
/// ```
/// use mcp_preamble::settings::{PolicyFile, Weight};
/// assert_eq!(Weight::new(2.5)?.get(), 2.5);
/// assert_eq!(
///     Weight::new(f64::INFINITY).unwrap_err().to_string(),
///     "invalid configuration: weight inf is outside 0.001..=1000"
/// );
/// let e = PolicyFile::from_str("version = 1\n[servers.a]\nweight = 1e308\n", "p.toml").unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "invalid configuration: p.toml:3:10: weight 1e308 is outside 0.001..=1000"
/// );
/// # Ok::<(), mcp_preamble::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Weight(f64);

impl Weight {
    /// The smallest weight: fair shares are computed in thousandths.
    pub const MIN: f64 = 0.001;
    /// The largest weight: a thousand times an ordinary server's share is
    /// already all of it, and a larger one would starve every other server.
    pub const MAX: f64 = 1000.0;

    /// The weight `weight`; fails with [`ErrorKind::InvalidConfig`]
    /// outside `0.001..=1000` (infinities and NaN included).
    pub fn new(weight: f64) -> Result<Weight> {
        if (Weight::MIN..=Weight::MAX).contains(&weight) {
            Ok(Weight(weight))
        } else {
            Err(Error::new(
                ErrorKind::InvalidConfig,
                Weight::outside(weight),
            ))
        }
    }

    /// The weight as a number.
    pub fn get(self) -> f64 {
        self.0
    }

    /// The error's text; a number far outside is shown with an exponent
    /// (`1e308`, not 309 digits).
    fn outside(weight: f64) -> String {
        let shown = if weight.abs() >= 1e6 {
            format!("{weight:e}")
        } else {
            weight.to_string()
        };
        format!(
            "weight {shown} is outside {}..={}",
            Weight::MIN,
            Weight::MAX
        )
    }
}

impl Default for Weight {
    /// 1.
    fn default() -> Weight {
        Weight(1.0)
    }
}

impl TryFrom<f64> for Weight {
    type Error = Error;

    fn try_from(weight: f64) -> Result<Weight> {
        Weight::new(weight)
    }
}

impl From<Weight> for f64 {
    fn from(w: Weight) -> f64 {
        w.0
    }
}

impl<'de> Deserialize<'de> for Weight {
    /// A number in `0.001..=1000`; the error is the check's, without its
    /// kind (the file's position is added where it is read).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Weight, D::Error> {
        let weight = f64::deserialize(d)?;
        Weight::new(weight).map_err(|_| serde::de::Error::custom(Weight::outside(weight)))
    }
}
