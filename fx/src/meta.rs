//! Tensor metadata carried on graph nodes.

use crate::sym::float::FloatExpr;
use crate::sym::SymExpr;

/// Element type. The names are torch's (`torch.float32` → `Float32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex64,
    Complex128,
}

impl DType {
    /// The torch attribute name, as in `torch.<name>`.
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    pub fn from_torch_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "uint8" => DType::UInt8,
            "int8" => DType::Int8,
            "int16" => DType::Int16,
            "int32" => DType::Int32,
            "int64" => DType::Int64,
            "float16" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            _ => return None,
        })
    }

    pub fn is_floating_point(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        )
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::UInt8 | DType::Int8 => 1,
            DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::Float32 => 4,
            DType::Int64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }
}

/// Where a tensor lives. `index` is `None` for a device given without an index (`"cuda"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    pub kind: String,
    pub index: Option<i64>,
}

impl Device {
    pub fn cpu() -> Device {
        Device {
            kind: "cpu".into(),
            index: None,
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{}", self.kind, i),
            None => write!(f, "{}", self.kind),
        }
    }
}

/// One dimension of a size or stride: a number, or an expression over the graph's size
/// symbols (`s0`, `s0*s1`, `(s0 // 2)`; see [`crate::sym`]). `Sym` never holds a constant
/// expression ([`Dim::from_expr`] folds those), so `known()` is `None` exactly for a dimension
/// that varies between calls: code that needs a number must handle that, never use a hint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(i64),
    Sym(SymExpr),
}

impl Dim {
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(v) => Some(*v),
            Dim::Sym(_) => None,
        }
    }

    pub fn from_expr(e: SymExpr) -> Dim {
        match e.as_const() {
            Some(v) => Dim::Known(v),
            None => Dim::Sym(e),
        }
    }

    /// The dimension as an expression (a constant for a known one).
    pub fn expr(&self) -> SymExpr {
        match self {
            Dim::Known(v) => SymExpr::constant(*v),
            Dim::Sym(e) => e.clone(),
        }
    }
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Known(v) => write!(f, "{v}"),
            Dim::Sym(e) => write!(f, "{e}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorMeta {
    pub dtype: DType,
    pub device: Device,
    pub sizes: Vec<Dim>,
    pub strides: Vec<Dim>,
    pub requires_grad: bool,
}

impl TensorMeta {
    /// Contiguous (row-major) strides for known sizes.
    pub fn contiguous(dtype: DType, device: Device, sizes: &[i64]) -> TensorMeta {
        let mut strides = vec![0i64; sizes.len()];
        let mut acc = 1i64;
        for i in (0..sizes.len()).rev() {
            strides[i] = acc;
            acc *= sizes[i].max(1);
        }
        TensorMeta {
            dtype,
            device,
            sizes: sizes.iter().map(|&s| Dim::Known(s)).collect(),
            strides: strides.into_iter().map(Dim::Known).collect(),
            requires_grad: false,
        }
    }

    pub fn known_sizes(&self) -> Option<Vec<i64>> {
        self.sizes.iter().map(Dim::known).collect()
    }

    pub fn known_strides(&self) -> Option<Vec<i64>> {
        self.strides.iter().map(Dim::known).collect()
    }

    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }

    /// Whether any size or stride varies between calls.
    pub fn is_symbolic(&self) -> bool {
        self.sizes
            .iter()
            .chain(&self.strides)
            .any(|d| matches!(d, Dim::Sym(_)))
    }
}

/// What a node produces.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeMeta {
    Tensor(TensorMeta),
    /// A tuple or list of results (e.g. `torch.split`, `max(dim=...)`), taken apart by getitem nodes.
    Tuple(Vec<NodeMeta>),
    Int(i64),
    /// A Python int computed from symbolic sizes (`x.size(0)`, `T * 2`): a graph value.
    SymInt(SymExpr),
    /// A Python float computed from symbolic sizes (`float(x.size(1))`, torch's `sym_float`;
    /// `x.size(-1) ** -0.5`, `a / b`, `math.sqrt(n)`): a graph value, so a fill or scale read
    /// from sizes is not a constant baked per size.
    SymFloat(FloatExpr),
    Float(f64),
    Bool(bool),
    /// No value (in-place ops return their input; `output` nodes) or not known.
    None,
}

impl NodeMeta {
    pub fn tensor(&self) -> Option<&TensorMeta> {
        match self {
            NodeMeta::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Whether a tensor's size or stride holds a float's rounding (`x[: round(n / 2)]`,
    /// `fx::sym::Atom::FloatToInt`), which C's index arithmetic does not print.
    pub fn has_float_sizes(&self) -> bool {
        match self {
            NodeMeta::Tensor(t) => t.sizes.iter().chain(&t.strides).any(|d| match d {
                Dim::Sym(e) => e.has_float_atoms(),
                Dim::Known(_) => false,
            }),
            NodeMeta::Tuple(items) => items.iter().any(NodeMeta::has_float_sizes),
            _ => false,
        }
    }

    /// Whether the value depends on symbolic sizes.
    pub fn is_symbolic(&self) -> bool {
        match self {
            NodeMeta::Tensor(t) => t.is_symbolic(),
            NodeMeta::Tuple(items) => items.iter().any(NodeMeta::is_symbolic),
            NodeMeta::SymInt(_) | NodeMeta::SymFloat(_) => true,
            _ => false,
        }
    }
}
