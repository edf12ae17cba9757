//! The resource limits of a run, and the machine's memory they default from.

use super::*;

/// Process and memory caps of the whole process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub pids: u64,
    pub memory_bytes: u64,
    pub nofile: u64,
    /// Size of the sandbox's `/tmp`.
    pub tmp_bytes: u64,
    /// Run even where pids and memory cannot be capped (operator `[limits] enforce = "best-effort"`).
    pub best_effort: bool,
}

impl Limits {
    /// 4096 processes and half the machine's memory (DESIGN 4.2).
    pub fn defaults() -> Limits {
        Limits::for_memory(total_memory())
    }

    /// The defaults on a machine of `total` bytes of memory (4 GiB where unknown): half
    /// of it for the sandbox, and a `/tmp` of that much but at most 4 GiB.
    pub(super) fn for_memory(total: Option<u64>) -> Limits {
        let memory = total.unwrap_or(4 << 30) / 2;
        Limits {
            pids: 4096,
            memory_bytes: memory,
            nofile: 4096,
            tmp_bytes: memory.min(4 << 30),
            best_effort: false,
        }
    }
}

pub(super) fn total_memory() -> Option<u64> {
    // sysinfo(2) rather than /proc/meminfo, which the kernel composes from dozens of
    // counters on every read: this runs before every sandbox start.
    // SAFETY: sysinfo fills the struct we pass.
    let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
    if unsafe { libc::sysinfo(&mut info) } != 0 {
        return None;
    }
    Some(bytes_of(info.totalram as u64, info.mem_unit))
}

/// sysinfo counts memory in units of `mem_unit` bytes (1 on 64-bit kernels, a page on
/// 32-bit ones with more memory than 32 bits count; 0 from kernels before 2.3.23).
pub(super) fn bytes_of(count: u64, mem_unit: u32) -> u64 {
    count * u64::from(mem_unit.max(1))
}
