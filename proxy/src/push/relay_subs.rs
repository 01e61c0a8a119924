//! The other instances' open relayed subscriptions, as one instance knows
//! them (`relay_sync`): the announcements on `a2a_relay_subs`
//! (`+<instance> <sub> <task>` when one opens, `-<instance> <sub>...` when
//! they close, `*` for all of an instance's) read and kept, and the table
//! read again now and then (`push::pg_shared::PgShared::subscribed_elsewhere`).

use std::collections::HashMap;

/// One announcement.
#[derive(Debug, PartialEq, Eq)]
pub enum Said<'a> {
    Opened {
        instance: &'a str,
        sub: u64,
        task: &'a str,
    },
    Closed {
        instance: &'a str,
        /// `None`: all of the instance's.
        subs: Option<Vec<u64>>,
    },
    /// Not one this proxy makes (the table is read again instead).
    Other,
}

impl<'a> Said<'a> {
    pub fn read(payload: &'a str) -> Said<'a> {
        match payload.split_at_checked(1) {
            Some(("+", rest)) => {
                let mut p = rest.splitn(3, ' ');
                match (p.next(), p.next().and_then(|s| s.parse().ok()), p.next()) {
                    (Some(instance), Some(sub), Some(task)) if !instance.is_empty() => {
                        Said::Opened {
                            instance,
                            sub,
                            task,
                        }
                    }
                    _ => Said::Other,
                }
            }
            Some(("-", rest)) => {
                let mut p = rest.split(' ');
                let Some(instance) = p.next().filter(|i| !i.is_empty()) else {
                    return Said::Other;
                };
                let mut subs = Vec::new();
                for s in p {
                    match (s, s.parse::<u64>()) {
                        ("*", _) => {
                            return Said::Closed {
                                instance,
                                subs: None,
                            }
                        }
                        (_, Ok(n)) => subs.push(n),
                        _ => return Said::Other,
                    }
                }
                Said::Closed {
                    instance,
                    subs: Some(subs),
                }
            }
            _ => Said::Other,
        }
    }
}

/// The other instances' open subscriptions, by instance and id, and the
/// tasks they follow.
#[derive(Default)]
pub struct Elsewhere {
    subs: HashMap<(String, u64), String>,
    tasks: HashMap<String, usize>,
}

impl Elsewhere {
    pub fn add(&mut self, instance: &str, sub: u64, task: &str) {
        if self
            .subs
            .insert((instance.into(), sub), task.into())
            .is_none()
        {
            *self.tasks.entry(task.into()).or_default() += 1;
        }
    }

    fn remove(&mut self, instance: &str, sub: u64) {
        if let Some(task) = self.subs.remove(&(instance.to_string(), sub)) {
            if let Some(n) = self.tasks.get_mut(&task) {
                *n -= 1;
                if *n == 0 {
                    self.tasks.remove(&task);
                }
            }
        }
    }

    pub fn apply(&mut self, said: Said<'_>) {
        match said {
            Said::Opened {
                instance,
                sub,
                task,
            } => self.add(instance, sub, task),
            Said::Closed {
                instance,
                subs: Some(subs),
            } => {
                for s in subs {
                    self.remove(instance, s);
                }
            }
            Said::Closed {
                instance,
                subs: None,
            } => {
                let subs: Vec<u64> = self
                    .subs
                    .keys()
                    .filter(|(i, _)| i == instance)
                    .map(|(_, s)| *s)
                    .collect();
                for s in subs {
                    self.remove(instance, s);
                }
            }
            Said::Other => {}
        }
    }

    /// Whether some other instance follows `task`.
    pub fn has(&self, task: &str) -> bool {
        self.tasks.contains_key(task)
    }

    /// How many tasks the others follow.
    pub fn tasks(&self) -> usize {
        self.tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_are_read_and_kept_and_junk_is_not() {
        assert_eq!(
            Said::read("+i-a 7 task with spaces"),
            Said::Opened {
                instance: "i-a",
                sub: 7,
                task: "task with spaces"
            }
        );
        assert_eq!(
            Said::read("-i-a 7 8"),
            Said::Closed {
                instance: "i-a",
                subs: Some(vec![7, 8])
            }
        );
        assert_eq!(
            Said::read("-i-a *"),
            Said::Closed {
                instance: "i-a",
                subs: None
            }
        );
        for junk in [
            "", "+", "+i-a", "+i-a x t", "+ 1 t", "-", "- 1", "-i-a 1 x", "?i-a 1 t",
        ] {
            assert_eq!(Said::read(junk), Said::Other, "{junk:?}");
        }
        let mut e = Elsewhere::default();
        for said in ["+i-a 1 t1", "+i-a 2 t1", "+i-b 1 t2", "+i-a 1 t1"] {
            e.apply(Said::read(said));
        }
        assert!(e.has("t1") && e.has("t2") && e.tasks() == 2);
        e.apply(Said::read("-i-a 1"));
        assert!(e.has("t1"), "another subscription of i-a follows t1");
        e.apply(Said::read("-i-a *"));
        assert!(!e.has("t1") && e.has("t2"));
        e.apply(Said::read("-i-b 1 9"));
        assert_eq!(e.tasks(), 0);
    }
}
