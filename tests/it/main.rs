//! All integration tests, in one binary.

mod common;

mod agent;
mod agent_e2e;
mod attacks_fifos;
mod attacks_files;
mod attacks_kernel;
mod attacks_policy;
mod bad_input;
mod cli;
mod concurrency;
mod config;
mod crash;
mod demo;
mod doctor;
mod edges;
mod egress;
mod fspolicy;
mod gate;
mod host_trust;
mod import;
mod install;
mod lifecycle;
mod live;
mod newcomer;
mod publish;
mod recovery;
mod review_loop;
mod sandbox;
mod sentinels;
mod sync;
mod teammate;
mod toolchains;
mod vault;
mod vault_delivery;
mod workspace;
