"""uopcheck.amd: MI350X bring-up checks (doctor, env) and the HCQ2 profiling consistency check."""
