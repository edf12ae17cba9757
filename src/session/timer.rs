//! Time limits (`run --timeout`, a profile's `[limits] time`): a run is ended once its time
//! is up, and its exit event says `cause: "timeout"`.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The exit code of a run its time limit ended, as timeout(1) gives.
pub const TIMED_OUT: u8 = 124;

/// A run's time limit: a thread that ends the sandbox at the deadline unless stopped first.
pub struct Timer {
    state: Arc<(Mutex<State>, Condvar)>,
}

#[derive(Default)]
struct State {
    stopped: bool,
    fired: bool,
}

impl Timer {
    /// Starts counting `limit` now; at its end the running sandbox is ended.
    pub fn arm(limit: Duration) -> Timer {
        Timer::arm_with(limit, crate::sandbox::spawn::end_sandbox)
    }

    /// [`Timer::arm`] with what to do at the deadline.
    pub fn arm_with(limit: Duration, end: impl FnOnce() + Send + 'static) -> Timer {
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = Arc::clone(&state);
        let deadline = Instant::now() + limit;
        std::thread::spawn(move || {
            let (lock, cvar) = &*shared;
            let mut s = lock.lock().expect("not poisoned");
            loop {
                if s.stopped {
                    return;
                }
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                s = cvar
                    .wait_timeout(s, deadline - now)
                    .expect("not poisoned")
                    .0;
            }
            s.fired = true;
            drop(s);
            end();
        });
        Timer { state }
    }

    /// Stops the timer; whether it had fired (the time limit ended the run).
    pub fn stop(self) -> bool {
        let (lock, cvar) = &*self.state;
        let mut s = lock.lock().expect("not poisoned");
        s.stopped = true;
        cvar.notify_all();
        s.fired
    }
}

/// A duration as the user wrote such: `90s`, `5m`, `1h30m`, `2` (seconds).
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("an empty duration".into());
    }
    if let Ok(secs) = text.parse::<u64>() {
        if secs == 0 {
            return Err(format!("'{text}' is no time at all"));
        }
        return Ok(Duration::from_secs(secs));
    }
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => {
                return Err(format!(
                    "'{text}': use a number with s, m, h or d (90s, 5m, 1h30m)"
                ))
            }
        };
        let n: u64 = number
            .parse()
            .map_err(|_| format!("'{text}': a unit without a number"))?;
        number.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("'{text}' is too long"))?;
    }
    if !number.is_empty() {
        return Err(format!("'{text}': a number without a unit after another"));
    }
    if total == 0 {
        return Err(format!("'{text}' is no time at all"));
    }
    Ok(Duration::from_secs(total))
}

/// `2s`, `5m`, `1h30m`: the form [`parse`] reads.
pub fn human(d: Duration) -> String {
    let mut s = d.as_secs();
    let mut out = String::new();
    for (unit, n) in [("d", 86400), ("h", 3600), ("m", 60)] {
        if s >= n {
            out.push_str(&format!("{}{unit}", s / n));
            s %= n;
        }
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_written() {
        assert_eq!(parse("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("2d").unwrap(), Duration::from_secs(172800));
        for bad in ["", "0", "5x", "m", "1h30", "-3"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(human(Duration::from_secs(5400)), "1h30m");
        assert_eq!(human(Duration::from_secs(2)), "2s");
    }

    #[test]
    fn a_timer_fires_at_its_deadline_and_not_once_stopped() {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = Timer::arm_with(Duration::from_millis(20), move || tx.send(()).unwrap());
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(t.stop());
        let (tx, rx) = std::sync::mpsc::channel();
        let t = Timer::arm_with(Duration::from_secs(60), move || tx.send(()).unwrap());
        assert!(!t.stop());
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    }
}
