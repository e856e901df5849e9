//! Reads one GPU's power, energy and limits through nvml-wrapper and optionally sets limits,
//! printing one `key=value` line each: a value, or the wrapper's error (`err:NoPermission`).
//! Usage: hwemu-nvml-rust-client INDEX [LIMIT_MW...]
use nvml_wrapper::Nvml;
use std::fmt::Debug;

fn show<T: Debug, E: Debug>(key: &str, r: Result<T, E>) {
    match r {
        Ok(v) => println!("{key}={v:?}"),
        Err(e) => println!("{key}=err:{e:?}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let index: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            println!("init=err:{e:?}");
            std::process::exit(1);
        }
    };
    show("count", nvml.device_count());
    let mut dev = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            println!("device=err:{e:?}");
            std::process::exit(1);
        }
    };
    show("name", dev.name());
    show("power_usage_mw", dev.power_usage());
    show("energy_mj", dev.total_energy_consumption());
    show("limit_mw", dev.power_management_limit());
    show("enforced_mw", dev.enforced_power_limit());
    show("default_mw", dev.power_management_limit_default());
    match dev.power_management_limit_constraints() {
        Ok(c) => println!("constraints_mw={},{}", c.min_limit, c.max_limit),
        Err(e) => println!("constraints_mw=err:{e:?}"),
    }
    for a in &args[2.min(args.len())..] {
        let mw: u32 = a.parse().expect("a limit in mW");
        match dev.set_power_management_limit(mw) {
            Ok(()) => println!("set_{mw}=ok"),
            Err(e) => println!("set_{mw}=err:{e:?}"),
        }
    }
    show("limit_after_mw", dev.power_management_limit());
}
