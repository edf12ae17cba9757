//! The sandbox (DESIGN section 4).
pub mod bwrap;
pub mod limits;
pub mod probe;
pub mod seccomp;
pub mod spawn;
pub mod spec;
