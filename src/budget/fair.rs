//! Sharing a total budget between servers by weighted max-min fairness.

/// Shares `total` tokens between servers by weighted max-min fairness.
///
/// Servers needing less than their weighted share get what they need; the
/// rest split what remains in proportion to their weights, again and again
/// until every remaining server needs more than its share. Shares are whole
/// tokens; leftover tokens go to the largest remainders, then to the earlier
/// server. Integer arithmetic only, so the result is deterministic.
pub(crate) fn fair_shares(total: usize, needs: &[usize], weights: &[u64]) -> Vec<usize> {
    let mut shares = vec![0usize; needs.len()];
    let mut active: Vec<usize> = (0..needs.len()).filter(|i| needs[*i] > 0).collect();
    let mut remaining = total as u128;
    let weight = |i: usize| weights[i].max(1) as u128;
    while !active.is_empty() {
        let w_sum: u128 = active.iter().map(|i| weight(*i)).sum();
        let satisfied: Vec<usize> = active
            .iter()
            .copied()
            .filter(|i| (needs[*i] as u128) * w_sum <= remaining * weight(*i))
            .collect();
        if satisfied.is_empty() {
            split(remaining, &active, weight, &mut shares);
            break;
        }
        for i in &satisfied {
            shares[*i] = needs[*i];
            remaining -= needs[*i] as u128;
        }
        active.retain(|i| !satisfied.contains(i));
    }
    shares
}

/// Splits `remaining` between the `active` servers in proportion to their
/// weights, in whole tokens: leftover tokens go to the largest remainders,
/// then to the earlier server.
fn split(remaining: u128, active: &[usize], weight: impl Fn(usize) -> u128, shares: &mut [usize]) {
    let w_sum: u128 = active.iter().map(|i| weight(*i)).sum();
    let mut rems: Vec<(u128, usize)> = Vec::with_capacity(active.len());
    let mut given = 0u128;
    for &i in active {
        let p = remaining * weight(i);
        shares[i] = (p / w_sum) as usize;
        given += p / w_sum;
        rems.push((p % w_sum, i));
    }
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let left = (remaining - given) as usize;
    for (_, i) in rems.into_iter().take(left) {
        shares[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_shares_by_hand() {
        // Equal weights: the small need is met, the rest split 250.
        assert_eq!(
            fair_shares(300, &[50, 200, 200], &[1, 1, 1]),
            [50, 125, 125]
        );
        // Weights 1:2:1 of 400 when everyone needs more.
        assert_eq!(
            fair_shares(400, &[500, 500, 500], &[1, 2, 1]),
            [100, 200, 100]
        );
        // Weight 1:3, the first needs less than its 50.
        assert_eq!(fair_shares(200, &[40, 1000], &[1, 3]), [40, 160]);
        // Leftover tokens go to the earliest on equal remainders.
        assert_eq!(fair_shares(10, &[100, 100, 100], &[1, 1, 1]), [4, 3, 3]);
        // 120: meeting the 20 leaves 33.3 each, which does not meet 35.
        assert_eq!(
            fair_shares(120, &[20, 35, 100, 100], &[1, 1, 1, 1]),
            [20, 34, 33, 33]
        );
        // 130: meeting the 20 leaves 36.7 each, which meets 35; the last two split 75.
        assert_eq!(
            fair_shares(130, &[20, 35, 100, 100], &[1, 1, 1, 1]),
            [20, 35, 38, 37]
        );
        // Nothing needed, nothing given.
        assert_eq!(fair_shares(100, &[0, 10], &[1, 1]), [0, 10]);
    }

    #[test]
    fn fair_shares_are_deterministic_and_within_the_total() {
        let needs = [7, 300, 45, 1000, 0, 90];
        let weights = [1000, 2500, 500, 1000, 1000, 3000];
        let first = fair_shares(400, &needs, &weights);
        for _ in 0..3 {
            assert_eq!(fair_shares(400, &needs, &weights), first);
        }
        assert_eq!(first.iter().sum::<usize>(), 400);
        assert!(first.iter().zip(&needs).all(|(s, n)| s <= n));
        // A weight of 0 counts as the smallest weight, not as nothing.
        assert_eq!(fair_shares(10, &[100, 100], &[0, 1]), [5, 5]);
    }

    #[test]
    fn enough_for_everyone_gives_each_its_need() {
        assert_eq!(fair_shares(1000, &[10, 20, 30], &[1, 9, 1]), [10, 20, 30]);
    }
}
