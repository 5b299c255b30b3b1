use crate::graph::{Arg, Graph, Target};
use crate::meta::{DType, Device, Dim, NodeMeta, TensorMeta};

fn t(dtype: DType, sizes: &[i64]) -> NodeMeta {
    NodeMeta::Tensor(TensorMeta::contiguous(dtype, Device::cpu(), sizes))
}

fn f(name: &str) -> Target {
    Target::Function(name.into())
}

fn sample() -> Graph {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(DType::Float32, &[2, 3]));
    let mut wm = TensorMeta::contiguous(DType::Float32, Device::cpu(), &[4, 3]);
    wm.requires_grad = true;
    let w = g.placeholder("w", NodeMeta::Tensor(wm));
    let lin = g.call(
        "linear",
        f("torch.nn.functional.linear"),
        vec![Arg::Node(x), Arg::Node(w)],
        vec![("bias".into(), Arg::None)],
        t(DType::Float32, &[2, 4]),
    );
    let add = g.call(
        "add",
        f("operator.add"),
        vec![Arg::Node(lin), Arg::Float(1.0)],
        vec![],
        t(DType::Float32, &[2, 4]),
    );
    let mut tm = TensorMeta::contiguous(DType::Float32, Device::cpu(), &[4, 2]);
    tm.strides = vec![Dim::Known(1), Dim::Known(4)];
    let tr = g.call(
        "transpose",
        Target::Method("transpose".into()),
        vec![Arg::Node(add), Arg::Int(0), Arg::Int(1)],
        vec![],
        NodeMeta::Tensor(tm),
    );
    let idx = Arg::Tuple(vec![
        Arg::Ellipsis,
        Arg::Slice(
            Box::new(Arg::Int(1)),
            Box::new(Arg::None),
            Box::new(Arg::None),
        ),
        Arg::None,
    ]);
    let item = g.call(
        "getitem",
        f("operator.getitem"),
        vec![Arg::Node(tr), idx],
        vec![],
        t(DType::Float32, &[4, 1, 1]),
    );
    let s = g.call(
        "sum",
        Target::Method("sum".into()),
        vec![Arg::Node(item)],
        vec![
            ("dim".into(), Arg::Tuple(vec![Arg::Int(-1)])),
            ("dtype".into(), Arg::DType(DType::Float64)),
        ],
        t(DType::Float64, &[4, 1]),
    );
    let m = g.call(
        "max",
        Target::Method("max".into()),
        vec![Arg::Node(s), Arg::Int(0)],
        vec![],
        NodeMeta::Tuple(vec![t(DType::Float64, &[1]), t(DType::Int64, &[1])]),
    );
    let neg = g.call(
        "neg",
        f("operator.neg"),
        vec![Arg::Node(add)],
        vec![],
        t(DType::Float32, &[2, 4]),
    );
    g.output(vec![Arg::Node(m), Arg::Node(neg)]);
    g
}

#[test]
fn python_code_reads_like_fx() {
    let expected = "\
def forward(self, x, w):
    # x: f32[2, 3]
    # w: f32[4, 3] grad
    linear = torch.nn.functional.linear(x, w, bias=None)  # f32[2, 4]
    add = linear + 1.0  # f32[2, 4]
    transpose = add.transpose(0, 1)  # f32[4, 2] stride=(1, 4)
    getitem = transpose[..., 1:, None]  # f32[4, 1, 1]
    sum_ = getitem.sum(dim=(-1,), dtype=torch.float64)  # f64[4, 1]
    max_ = sum_.max(0)  # (f64[1], i64[1])
    neg = -add  # f32[2, 4]
    return (max_, neg)
";
    assert_eq!(sample().python_code("forward"), expected);
}

#[test]
fn constants_are_python_literals() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(DType::Float16, &[3]));
    let c = g.call(
        "full",
        f("torch.full"),
        vec![Arg::List(vec![Arg::Int(2)]), Arg::Float(f64::NEG_INFINITY)],
        vec![
            (
                "device".into(),
                Arg::Device(Device {
                    kind: "cuda".into(),
                    index: Some(1),
                }),
            ),
            ("layout".into(), Arg::TorchAttr("torch.strided".into())),
        ],
        NodeMeta::None,
    );
    let d = g.call(
        "div",
        f("torch.div"),
        vec![Arg::Node(x), Arg::Float(1e-5)],
        vec![("rounding_mode".into(), Arg::Str("fl'oor".into()))],
        NodeMeta::Int(7),
    );
    let e = g.call(
        "getitem",
        f("operator.getitem"),
        vec![
            Arg::Node(x),
            Arg::Tuple(vec![Arg::Slice(
                Box::new(Arg::None),
                Box::new(Arg::Int(-1)),
                Box::new(Arg::Int(2)),
            )]),
        ],
        vec![],
        NodeMeta::None,
    );
    g.output(vec![Arg::Node(c), Arg::Node(d), Arg::Node(e)]);
    let expected = "\
def f(self, x):
    # x: f16[3]
    full = torch.full([2], float('-inf'), device=torch.device('cuda', 1), layout=torch.strided)
    div = torch.div(x, 1e-5, rounding_mode='fl\\'oor')  # int 7
    getitem = x[:-1:2,]
    return (full, div, getitem)
";
    assert_eq!(g.python_code("f"), expected);
}

#[test]
fn dot_lists_nodes_and_edges() {
    let mut g = Graph::new();
    let x = g.placeholder("x", t(DType::Float32, &[2]));
    let a = g.call(
        "mul",
        f("operator.mul"),
        vec![Arg::Node(x), Arg::Node(x)],
        vec![],
        t(DType::Float32, &[2]),
    );
    let r = g.call(
        "relu",
        Target::Method("relu".into()),
        vec![Arg::Node(a)],
        vec![],
        t(DType::Float32, &[2]),
    );
    g.output(vec![Arg::Node(r), Arg::Node(x)]);
    let expected = r#"digraph fx {
    node [shape=box, fontname="monospace"];
    "x" [label="x\nplaceholder\nf32[2]"];
    "mul" [label="mul\noperator.mul\nf32[2]"];
    "relu" [label="relu\n.relu()\nf32[2]"];
    "output" [label="output\noutput"];
    "x" -> "mul";
    "mul" -> "relu";
    "relu" -> "output";
    "x" -> "output";
}
"#;
    assert_eq!(g.to_dot(), expected);
}

#[test]
fn reserved_names_are_renamed() {
    let mut g = Graph::new();
    let x = g.placeholder("self", t(DType::Float32, &[2]));
    let y = g.call(
        "torch",
        f("torch.sin"),
        vec![Arg::Node(x)],
        vec![],
        t(DType::Float32, &[2]),
    );
    g.output(vec![Arg::Node(y)]);
    assert_eq!(
        g.python_code("forward"),
        "def forward(self, self_):\n    # self_: f32[2]\n    torch_ = torch.sin(self_)  # f32[2]\n    return (torch_,)\n"
    );
}
