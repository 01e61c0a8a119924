//! Compiles the project's own A2A contracts with a vendored `protoc`.

use std::{env, fs, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let wkt_include = protoc_bin_vendored::include_path()?;
    // SAFETY: build scripts are single-threaded at this point.
    unsafe { env::set_var("PROTOC", protoc) };

    let out = PathBuf::from(env::var("OUT_DIR")?);
    let v03_descriptors = out.join("a2a_v03_descriptors.bin");

    println!("cargo:rerun-if-changed=v03/a2a.proto");
    println!("cargo:rerun-if-changed=v10/a2a.proto");

    // v0.3: prost + tonic, well-known types from pbjson_types so the
    // messages can also carry ProtoJSON serde impls (v0.3 REST bodies).
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .file_descriptor_set_path(&v03_descriptors)
        // Keeps tonic-prost-build from mapping them to prost_types itself.
        .compile_well_known_types(true)
        .extern_path(".google.protobuf", "::pbjson_types")
        .compile_protos(
            &["v03/a2a.proto"],
            &["v03", wkt_include.to_str().unwrap_or(".")],
        )?;
    let descriptors = fs::read(&v03_descriptors)?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptors)?
        .build(&[".a2a.v1"])?;

    // v1.0: prost + tonic; same well-known types for uniform conversions.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Keeps tonic-prost-build from mapping them to prost_types itself.
        .compile_well_known_types(true)
        .extern_path(".google.protobuf", "::pbjson_types")
        .compile_protos(
            &["v10/a2a.proto"],
            &["v10", wkt_include.to_str().unwrap_or(".")],
        )?;
    Ok(())
}
