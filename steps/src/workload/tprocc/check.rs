//! The TPC-C consistency conditions (clause 3.3.2) that a profile guarantees, each as one SQL
//! query counting the rows that violate it: 1–9 for `hammerdb`, 1–10 and 12 for `spec`
//! (11 holds only right after the load).

use crate::rundir::{CheckCondition, CheckJson};
use anyhow::Result;

use super::Profile;

pub(crate) struct Condition {
    pub(crate) number: u32,
    pub(crate) name: &'static str,
    pub(crate) sql: &'static str,
}

/// Conditions 10 and 12: each customer `c` joined to `ol.s`, the amount of its delivered lines.
macro_rules! delivered_amount_per_customer {
    () => {
        "LEFT JOIN (SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(l.ol_amount) s FROM orders o JOIN order_line l \
                    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id \
                    WHERE l.ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) ol \
           ON ol.o_w_id = c.c_w_id AND ol.o_d_id = c.c_d_id AND ol.o_c_id = c.c_id"
    };
}

pub(crate) const CONDITIONS: &[Condition] = &[
    Condition { number: 1, name: "W_YTD = sum(D_YTD)", sql:
        "SELECT count(*) FROM warehouse w JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) d \
         ON d.d_w_id = w.w_id WHERE w.w_ytd <> d.s" },
    Condition { number: 2, name: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", sql:
        "SELECT count(*) FROM district d \
         LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) m FROM orders GROUP BY 1, 2) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id \
         LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) m FROM new_order GROUP BY 1, 2) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id \
         WHERE d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND d.d_next_o_id - 1 <> n.m)" },
    Condition { number: 3, name: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(new_order)", sql:
        "SELECT count(*) FROM (SELECT no_w_id, no_d_id FROM new_order GROUP BY 1, 2 \
         HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) x" },
    Condition { number: 4, name: "sum(O_OL_CNT) = count(order_line) per district", sql:
        "SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders GROUP BY 1, 2) o \
         FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) c FROM order_line GROUP BY 1, 2) l \
         ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.s IS DISTINCT FROM l.c" },
    Condition { number: 5, name: "O_CARRIER_ID IS NULL <=> a new_order row exists", sql:
        "SELECT count(*) FROM orders o LEFT JOIN new_order n \
         ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id \
         WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)" },
    Condition { number: 6, name: "O_OL_CNT = count(order_line) per order", sql:
        "SELECT count(*) FROM orders o LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) c FROM order_line GROUP BY 1, 2, 3) l \
         ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id \
         WHERE o.o_ol_cnt IS DISTINCT FROM l.c" },
    Condition { number: 7, name: "OL_DELIVERY_D IS NULL <=> O_CARRIER_ID IS NULL", sql:
        "SELECT count(*) FROM order_line l JOIN orders o \
         ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id \
         WHERE (l.ol_delivery_d IS NULL) <> (o.o_carrier_id IS NULL)" },
    Condition { number: 8, name: "W_YTD = sum(H_AMOUNT) per warehouse", sql:
        "SELECT count(*) FROM warehouse w LEFT JOIN (SELECT h_w_id, sum(h_amount) s FROM history GROUP BY 1) h \
         ON h.h_w_id = w.w_id WHERE w.w_ytd IS DISTINCT FROM h.s" },
    Condition { number: 9, name: "D_YTD = sum(H_AMOUNT) per district", sql:
        "SELECT count(*) FROM district d LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s FROM history GROUP BY 1, 2) h \
         ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id WHERE d.d_ytd IS DISTINCT FROM h.s" },
    Condition { number: 10, name: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", sql: concat!(
        "SELECT count(*) FROM customer c ", delivered_amount_per_customer!(), " \
         LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history GROUP BY 1, 2, 3) h \
           ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id \
         WHERE c.c_balance <> coalesce(ol.s, 0) - coalesce(h.s, 0)") },
    Condition { number: 12, name: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", sql: concat!(
        "SELECT count(*) FROM customer c ", delivered_amount_per_customer!(), " \
         WHERE c.c_balance + c.c_ytd_payment <> coalesce(ol.s, 0)") },
];

/// The conditions a profile guarantees.
pub(crate) fn for_profile(p: Profile) -> Vec<&'static Condition> {
    CONDITIONS
        .iter()
        .filter(|c| match p {
            Profile::Hammerdb => c.number <= 9,
            Profile::Spec => true,
        })
        .collect()
}

/// Runs the profile's conditions: check.json's content.
pub(crate) fn run(c: &mut postgres::Client, p: Profile) -> Result<CheckJson> {
    let mut conditions = vec![];
    for cond in for_profile(p) {
        let n: i64 = c.query_one(cond.sql, &[])?.get(0);
        conditions.push(CheckCondition {
            condition: Some(cond.number),
            name: cond.name.into(),
            expected: None,
            got: None,
            violations: n,
        });
    }
    Ok(CheckJson {
        ok: conditions.iter().all(|c| c.violations == 0),
        profile: Some(p.name().into()),
        conditions,
    })
}
