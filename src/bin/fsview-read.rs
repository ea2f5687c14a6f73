#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]
fsview::main!(fsview::read::main);
