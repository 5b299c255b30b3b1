fn main() {
    // Exposes `Py_3_12` and friends so frame layouts can be chosen per interpreter version.
    pyo3_build_config::use_pyo3_cfgs();
}
