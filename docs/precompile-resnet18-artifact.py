"""torchferro precompiled artifact (format 1).

Captured from <lambda> at capture_resnet18.py:9, for torchferro 0.1.0 graph-format-1,
torch 2.11.0+cu130, Python 3.11.7 on x86_64.

Load it with torchferro.compiler.precompile.load(<this file>, <its cache>): the loader
checks the cache's manifest and hashes, then binds each graph_N below to the graph kept
in the cache (its kernels, or torch calls). Each _entry_N checks its guards as Python
conditions, reads the graph's inputs (parameters and buffers included) from the
arguments by attribute path, runs graph N and rebuilds the result. No weights are
stored: the model passed in is read on every call. At a graph break, the entry runs
its transformed code (kept in the cache), which calls graph_call_N, runs the breaking
instruction natively and tail-calls resume_R, the entries of the code after the break.
"""

import torch

from torchferro._precompile import _runtime as _rt

CACHE_ID = '1c2a5501a552926c51c6e2ea67c729c3d6db5ecdcd9801f380505ec0148a3dab'
PARAMS = ('model', 'x')
FUNCTION = ('__main__', '<lambda>')
# The cache member of each graph, in entry order.
GRAPHS = [
    'graphs/graph_0.json',  # entry 0/0: inductor, 173 nodes
]
# The transformed code of each entry with a graph break (bound by the loader).
TRANSFORMED = {}
# The module whose globals that code runs with (None: the builtins only).
GLOBALS = None

# Classes, functions and modules the guards and results refer to.
functional_0 = _rt.resolve('module:torch.nn.functional')
conv2d_1 = _rt.resolve('torch.conv2d')
batch_norm_2 = _rt.resolve('torch.nn.functional.batch_norm')
relu_3 = _rt.resolve('torch.nn.functional.relu')
max_pool2d_4 = _rt.resolve('torch.nn.functional.max_pool2d')
adaptive_avg_pool2d_5 = _rt.resolve('torch.nn.functional.adaptive_avg_pool2d')
linear_6 = _rt.resolve('torch._C._nn.linear')
Tensor_7 = _rt.resolve('torch.Tensor')
TensorBase_8 = _rt.resolve('torch._C.TensorBase')
dim_9 = _rt.resolve('torch._C.TensorBase.dim')
torch_10 = _rt.resolve('module:torch')
flatten_11 = _rt.resolve('torch.flatten')
ResNet_12 = _rt.resolve('torchvision.models.resnet.ResNet')
_forward_impl_13 = _rt.resolve('torchvision.models.resnet.ResNet._forward_impl')
Conv2d_14 = _rt.resolve('torch.nn.modules.conv.Conv2d')
_conv_forward_15 = _rt.resolve('torch.nn.modules.conv.Conv2d._conv_forward')
Parameter_16 = _rt.resolve('torch.nn.parameter.Parameter')
tuple_17 = _rt.resolve('builtins.tuple')
BatchNorm2d_18 = _rt.resolve('torch.nn.modules.batchnorm.BatchNorm2d')
_check_input_dim_19 = _rt.resolve('torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim')
ReLU_20 = _rt.resolve('torch.nn.modules.activation.ReLU')
MaxPool2d_21 = _rt.resolve('torch.nn.modules.pooling.MaxPool2d')
Sequential_22 = _rt.resolve('torch.nn.modules.container.Sequential')
BasicBlock_23 = _rt.resolve('torchvision.models.resnet.BasicBlock')
AdaptiveAvgPool2d_24 = _rt.resolve('torch.nn.modules.pooling.AdaptiveAvgPool2d')
Linear_25 = _rt.resolve('torch.nn.modules.linear.Linear')
conv_26 = _rt.resolve('module:torch.nn.modules.conv')
batchnorm_27 = _rt.resolve('module:torch.nn.modules.batchnorm')
pooling_28 = _rt.resolve('module:torch.nn.modules.pooling')
resnet_29 = _rt.resolve('module:torchvision.models.resnet')

graph_0 = None


def _bind(graphs, transformed):
    """Called by the loader with the graphs (and transformed code) it built from
    the verified cache."""
    g = globals()
    for i, graph in enumerate(graphs):
        g[f'graph_{i}'] = graph
    g.update(transformed)


# Entry 0/0 (<lambda>) was compiled with these guards:
#   GRAD_MODE torch.is_grad_enabled() == False
#   MODULE_ATTRS torch.nn.functional: conv2d, batch_norm, relu, max_pool2d, adaptive_avg_pool2d, linear are the objects read (checked when its dict changes)
#   CLASS_ATTRS Tensor: dim (absent) are the objects read (checked when its dict changes)
#   CLASS_ATTRS TensorBase: dim are the objects read (checked when its dict changes)
#   MODULE_ATTRS torch: flatten are the objects read (checked when its dict changes)
#   TYPE_MATCH L['model']: ResNet  # capture_resnet18.py:9
#   LENGTH_CHECK len(L['model']._forward_hooks) == 0  # capture_resnet18.py:9
#   LENGTH_CHECK len(L['model']._forward_pre_hooks) == 0  # capture_resnet18.py:9
#   LENGTH_CHECK len(L['model']._backward_hooks) == 0  # capture_resnet18.py:9
#   LENGTH_CHECK len(L['model']._backward_pre_hooks) == 0  # capture_resnet18.py:9
#   ID_MATCH L['model']._forward_impl.__func__: <function ResNet._forward_impl at 0x7f87875bf4c0>  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:285
#   TYPE_MATCH L['model']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   LENGTH_CHECK len(L['model']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   LENGTH_CHECK len(L['model']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   LENGTH_CHECK len(L['model']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   LENGTH_CHECK len(L['model']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   EQUALS_MATCH L['model']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:268
#   ID_MATCH L['model']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[64, 3, 7, 7], stride=[147, 49, 7, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].padding[0] == 3  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].padding[1] == 3  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   LENGTH_CHECK len(L['model']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   LENGTH_CHECK len(L['model']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   LENGTH_CHECK len(L['model']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   LENGTH_CHECK len(L['model']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   EQUALS_MATCH L['model']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:269
#   ID_MATCH L['model']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   LENGTH_CHECK len(L['model']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   LENGTH_CHECK len(L['model']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   LENGTH_CHECK len(L['model']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   LENGTH_CHECK len(L['model']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   EQUALS_MATCH L['model']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:270
#   TYPE_MATCH L['model']._modules['maxpool']: MaxPool2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   LENGTH_CHECK len(L['model']._modules['maxpool']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   LENGTH_CHECK len(L['model']._modules['maxpool']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   LENGTH_CHECK len(L['model']._modules['maxpool']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   LENGTH_CHECK len(L['model']._modules['maxpool']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   EQUALS_MATCH L['model']._modules['maxpool'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:271
#   EQUALS_MATCH L['model']._modules['maxpool'].kernel_size == 3  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:226
#   EQUALS_MATCH L['model']._modules['maxpool'].stride == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:227
#   EQUALS_MATCH L['model']._modules['maxpool'].padding == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:228
#   EQUALS_MATCH L['model']._modules['maxpool'].dilation == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:229
#   EQUALS_MATCH L['model']._modules['maxpool'].ceil_mode == False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:230
#   EQUALS_MATCH L['model']._modules['maxpool'].return_indices == False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:231
#   TYPE_MATCH L['model']._modules['layer1']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   EQUALS_MATCH L['model']._modules['layer1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   DICT_KEYS L['model']._modules['layer1']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:273
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[64, 64, 3, 3], stride=[576, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[64, 64, 3, 3], stride=[576, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   NONE_MATCH L['model']._modules['layer1']._modules['0'].downsample is None  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[64, 64, 3, 3], stride=[576, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[64, 64, 3, 3], stride=[576, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[64], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[64], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   NONE_MATCH L['model']._modules['layer1']._modules['1'].downsample is None  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   TYPE_MATCH L['model']._modules['layer2']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   EQUALS_MATCH L['model']._modules['layer2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   DICT_KEYS L['model']._modules['layer2']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:274
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[128, 64, 3, 3], stride=[576, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[128, 128, 3, 3], stride=[1152, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   DICT_KEYS L['model']._modules['layer2']._modules['0']._modules['downsample']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._parameters['weight']: torch.float32, cpu, size=[128, 64, 1, 1], stride=[64, 1, 1, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   ID_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['weight']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['bias']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[128, 128, 3, 3], stride=[1152, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[128, 128, 3, 3], stride=[1152, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[128], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[128], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   NONE_MATCH L['model']._modules['layer2']._modules['1'].downsample is None  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   TYPE_MATCH L['model']._modules['layer3']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   EQUALS_MATCH L['model']._modules['layer3'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   DICT_KEYS L['model']._modules['layer3']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:275
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[256, 128, 3, 3], stride=[1152, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[256, 256, 3, 3], stride=[2304, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   DICT_KEYS L['model']._modules['layer3']._modules['0']._modules['downsample']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._parameters['weight']: torch.float32, cpu, size=[256, 128, 1, 1], stride=[128, 1, 1, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   ID_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['weight']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['bias']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[256, 256, 3, 3], stride=[2304, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[256, 256, 3, 3], stride=[2304, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[256], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[256], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   NONE_MATCH L['model']._modules['layer3']._modules['1'].downsample is None  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   TYPE_MATCH L['model']._modules['layer4']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   EQUALS_MATCH L['model']._modules['layer4'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   DICT_KEYS L['model']._modules['layer4']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:276
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[512, 256, 3, 3], stride=[2304, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[512, 512, 3, 3], stride=[4608, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']: Sequential  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   DICT_KEYS L['model']._modules['layer4']._modules['0']._modules['downsample']._modules == ['0', '1']  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:100
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._parameters['weight']: torch.float32, cpu, size=[512, 256, 1, 1], stride=[256, 1, 1, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   ID_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['weight']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['bias']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']: BasicBlock  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:105
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:92
#   ID_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._parameters['weight']: torch.float32, cpu, size=[512, 512, 3, 3], stride=[4608, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:93
#   ID_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_mean']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_var']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['weight']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['bias']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['relu']: ReLU  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['relu'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:94
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']: Conv2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:96
#   ID_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._conv_forward.__func__: <function Conv2d._conv_forward at 0x7f8788564b80>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._parameters['weight']: torch.float32, cpu, size=[512, 512, 3, 3], stride=[4608, 9, 3, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   NONE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._parameters['bias'] is None  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:553
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding_mode == 'zeros'  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:535
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].stride) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].padding) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].groups == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:549
#   TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']: BatchNorm2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:97
#   ID_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._check_input_dim.__func__: <function BatchNorm2d._check_input_dim at 0x7f878855b880>  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:161
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].momentum == 0.1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:166
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_mean']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:187
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_var']: torch.float32, cpu, size=[512], stride=[1], requires_grad=False  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:202
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['weight']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:203
#   TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['bias']: torch.float32, cpu, size=[512], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:204
#   EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].eps == 1e-05  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:207
#   NONE_MATCH L['model']._modules['layer4']._modules['1'].downsample is None  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:99
#   TYPE_MATCH L['model']._modules['avgpool']: AdaptiveAvgPool2d  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   LENGTH_CHECK len(L['model']._modules['avgpool']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   LENGTH_CHECK len(L['model']._modules['avgpool']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   LENGTH_CHECK len(L['model']._modules['avgpool']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   LENGTH_CHECK len(L['model']._modules['avgpool']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   EQUALS_MATCH L['model']._modules['avgpool'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:278
#   TYPE_MATCH L['model']._modules['avgpool'].output_size: tuple  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:1510
#   LENGTH_CHECK len(L['model']._modules['avgpool'].output_size) == 2  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:1510
#   EQUALS_MATCH L['model']._modules['avgpool'].output_size[0] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:1510
#   EQUALS_MATCH L['model']._modules['avgpool'].output_size[1] == 1  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:1510
#   TYPE_MATCH L['model']._modules['fc']: Linear  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   LENGTH_CHECK len(L['model']._modules['fc']._forward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   LENGTH_CHECK len(L['model']._modules['fc']._forward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   LENGTH_CHECK len(L['model']._modules['fc']._backward_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   LENGTH_CHECK len(L['model']._modules['fc']._backward_pre_hooks) == 0  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   EQUALS_MATCH L['model']._modules['fc'].training == False  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   TENSOR_MATCH L['model']._modules['fc']._parameters['weight']: torch.float32, cpu, size=[1000, 512], stride=[512, 1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   TENSOR_MATCH L['model']._modules['fc']._parameters['bias']: torch.float32, cpu, size=[1000], stride=[1], requires_grad=True  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:280
#   TENSOR_MATCH L['x']: torch.float32, cpu, size=[1, 3, 224, 224], stride=[150528, 50176, 224, 1], requires_grad=False  # capture_resnet18.py:9
#   ID_MATCH G[torch.nn.modules.conv]['F']: <module 'torch.nn.functional' from '/work/main/.venv/lib/...  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:548
#   ID_MATCH G[torch.nn.modules.batchnorm]['F']: <module 'torch.nn.functional' from '/work/main/.venv/lib/...  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py:194
#   ID_MATCH G[torch.nn.modules.pooling]['F']: <module 'torch.nn.functional' from '/work/main/.venv/lib/...  # /work/main/.venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py:224
#   ID_MATCH G[torchvision.models.resnet]['torch']: <module 'torch' from '/work/main/.venv/lib/python3.11/sit...  # /work/main/.venv/lib/python3.11/site-packages/torchvision/models/resnet.py:279

def _entry_0(model, x):
    """Compiled entry 0/0: the guards, then graph 0."""
    _at = None
    try:
        _at = 'GRAD_MODE torch.is_grad_enabled() == False'
        if not (torch.is_grad_enabled() is False):
            return _rt.Fail(_at, 'grad mode is ' + str(torch.is_grad_enabled()))
        _at = 'AUTOCAST off'
        if not (not torch._C._is_any_autocast_enabled()):
            return _rt.Fail(_at, 'autocast is on')
        _at = 'ATTRS torch.nn.functional.conv2d is torch.conv2d'
        if not (vars(functional_0).get('conv2d') is conv2d_1):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('conv2d')))
        _at = 'ATTRS torch.nn.functional.batch_norm is torch.nn.functional.batch_norm'
        if not (vars(functional_0).get('batch_norm') is batch_norm_2):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('batch_norm')))
        _at = 'ATTRS torch.nn.functional.relu is torch.nn.functional.relu'
        if not (vars(functional_0).get('relu') is relu_3):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('relu')))
        _at = 'ATTRS torch.nn.functional.max_pool2d is torch.nn.functional.max_pool2d'
        if not (vars(functional_0).get('max_pool2d') is max_pool2d_4):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('max_pool2d')))
        _at = 'ATTRS torch.nn.functional.adaptive_avg_pool2d is torch.nn.functional.adaptive_avg_pool2d'
        if not (vars(functional_0).get('adaptive_avg_pool2d') is adaptive_avg_pool2d_5):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('adaptive_avg_pool2d')))
        _at = 'ATTRS torch.nn.functional.linear is torch._C._nn.linear'
        if not (vars(functional_0).get('linear') is linear_6):
            return _rt.Fail(_at, _rt.describe(vars(functional_0).get('linear')))
        _at = 'ATTRS torch.Tensor.dim is absent'
        if not ('dim' not in vars(Tensor_7)):
            return _rt.Fail(_at, 'present: ' + _rt.describe(vars(Tensor_7)['dim']))
        _at = 'ATTRS torch._C.TensorBase.dim is torch._C.TensorBase.dim'
        if not (vars(TensorBase_8).get('dim') is dim_9):
            return _rt.Fail(_at, _rt.describe(vars(TensorBase_8).get('dim')))
        _at = 'ATTRS torch.flatten is torch.flatten'
        if not (vars(torch_10).get('flatten') is flatten_11):
            return _rt.Fail(_at, _rt.describe(vars(torch_10).get('flatten')))
        _at = "TYPE_MATCH L['model'] (expected torchvision.models.resnet.ResNet)"
        if not (type(model) is ResNet_12):
            return _rt.Fail(_at, _rt.describe(model))
        _at = "LENGTH_CHECK len(L['model']._forward_hooks) == 0"
        v0 = model._forward_hooks
        if not (len(v0) == 0):
            return _rt.Fail(_at, _rt.describe(v0))
        _at = "LENGTH_CHECK len(L['model']._forward_pre_hooks) == 0"
        v1 = model._forward_pre_hooks
        if not (len(v1) == 0):
            return _rt.Fail(_at, _rt.describe(v1))
        _at = "LENGTH_CHECK len(L['model']._backward_hooks) == 0"
        v2 = model._backward_hooks
        if not (len(v2) == 0):
            return _rt.Fail(_at, _rt.describe(v2))
        _at = "LENGTH_CHECK len(L['model']._backward_pre_hooks) == 0"
        v3 = model._backward_pre_hooks
        if not (len(v3) == 0):
            return _rt.Fail(_at, _rt.describe(v3))
        _at = "ID_MATCH L['model']._forward_impl.__func__ is torchvision.models.resnet.ResNet._forward_impl"
        v4 = model._forward_impl
        v5 = v4.__func__
        if not (v5 is _forward_impl_13):
            return _rt.Fail(_at, _rt.describe(v5))
        _at = "TYPE_MATCH L['model']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v6 = model._modules
        v7 = v6['conv1']
        if not (type(v7) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v7))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1']._forward_hooks) == 0"
        v8 = v7._forward_hooks
        if not (len(v8) == 0):
            return _rt.Fail(_at, _rt.describe(v8))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1']._forward_pre_hooks) == 0"
        v9 = v7._forward_pre_hooks
        if not (len(v9) == 0):
            return _rt.Fail(_at, _rt.describe(v9))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1']._backward_hooks) == 0"
        v10 = v7._backward_hooks
        if not (len(v10) == 0):
            return _rt.Fail(_at, _rt.describe(v10))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1']._backward_pre_hooks) == 0"
        v11 = v7._backward_pre_hooks
        if not (len(v11) == 0):
            return _rt.Fail(_at, _rt.describe(v11))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].training == False"
        v12 = v7.training
        if not (type(v12) is bool and v12 == False):
            return _rt.Fail(_at, _rt.describe(v12))
        _at = "ID_MATCH L['model']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v13 = v7._conv_forward
        v14 = v13.__func__
        if not (v14 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v14))
        _at = "TENSOR_MATCH L['model']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64, 3, 7, 7), stride=(147, 49, 7, 1), device=cpu, requires_grad=True))"
        v15 = v7._parameters
        v16 = v15['weight']
        if not (type(v16) is Parameter_16 and v16.dtype is torch.float32 and v16.device == torch.device('cpu') and v16.shape == (64, 3, 7, 7) and v16.stride() == (147, 49, 7, 1) and v16.requires_grad is True and v16.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v16))
        _at = "NONE_MATCH L['model']._modules['conv1']._parameters['bias'] is None"
        v17 = v15['bias']
        if not (v17 is None):
            return _rt.Fail(_at, _rt.describe(v17))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].padding_mode == 'zeros'"
        v18 = v7.padding_mode
        if not (type(v18) is str and v18 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v18))
        _at = "TYPE_MATCH L['model']._modules['conv1'].stride (expected builtins.tuple)"
        v19 = v7.stride
        if not (type(v19) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v19))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1'].stride) == 2"
        if not (len(v19) == 2):
            return _rt.Fail(_at, _rt.describe(v19))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].stride[0] == 2"
        v20 = v19[0]
        if not (type(v20) is int and v20 == 2):
            return _rt.Fail(_at, _rt.describe(v20))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].stride[1] == 2"
        v21 = v19[1]
        if not (type(v21) is int and v21 == 2):
            return _rt.Fail(_at, _rt.describe(v21))
        _at = "TYPE_MATCH L['model']._modules['conv1'].padding (expected builtins.tuple)"
        v22 = v7.padding
        if not (type(v22) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v22))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1'].padding) == 2"
        if not (len(v22) == 2):
            return _rt.Fail(_at, _rt.describe(v22))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].padding[0] == 3"
        v23 = v22[0]
        if not (type(v23) is int and v23 == 3):
            return _rt.Fail(_at, _rt.describe(v23))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].padding[1] == 3"
        v24 = v22[1]
        if not (type(v24) is int and v24 == 3):
            return _rt.Fail(_at, _rt.describe(v24))
        _at = "TYPE_MATCH L['model']._modules['conv1'].dilation (expected builtins.tuple)"
        v25 = v7.dilation
        if not (type(v25) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v25))
        _at = "LENGTH_CHECK len(L['model']._modules['conv1'].dilation) == 2"
        if not (len(v25) == 2):
            return _rt.Fail(_at, _rt.describe(v25))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].dilation[0] == 1"
        v26 = v25[0]
        if not (type(v26) is int and v26 == 1):
            return _rt.Fail(_at, _rt.describe(v26))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].dilation[1] == 1"
        v27 = v25[1]
        if not (type(v27) is int and v27 == 1):
            return _rt.Fail(_at, _rt.describe(v27))
        _at = "EQUALS_MATCH L['model']._modules['conv1'].groups == 1"
        v28 = v7.groups
        if not (type(v28) is int and v28 == 1):
            return _rt.Fail(_at, _rt.describe(v28))
        _at = "TYPE_MATCH L['model']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v29 = v6['bn1']
        if not (type(v29) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v29))
        _at = "LENGTH_CHECK len(L['model']._modules['bn1']._forward_hooks) == 0"
        v30 = v29._forward_hooks
        if not (len(v30) == 0):
            return _rt.Fail(_at, _rt.describe(v30))
        _at = "LENGTH_CHECK len(L['model']._modules['bn1']._forward_pre_hooks) == 0"
        v31 = v29._forward_pre_hooks
        if not (len(v31) == 0):
            return _rt.Fail(_at, _rt.describe(v31))
        _at = "LENGTH_CHECK len(L['model']._modules['bn1']._backward_hooks) == 0"
        v32 = v29._backward_hooks
        if not (len(v32) == 0):
            return _rt.Fail(_at, _rt.describe(v32))
        _at = "LENGTH_CHECK len(L['model']._modules['bn1']._backward_pre_hooks) == 0"
        v33 = v29._backward_pre_hooks
        if not (len(v33) == 0):
            return _rt.Fail(_at, _rt.describe(v33))
        _at = "EQUALS_MATCH L['model']._modules['bn1'].training == False"
        v34 = v29.training
        if not (type(v34) is bool and v34 == False):
            return _rt.Fail(_at, _rt.describe(v34))
        _at = "ID_MATCH L['model']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v35 = v29._check_input_dim
        v36 = v35.__func__
        if not (v36 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v36))
        _at = "EQUALS_MATCH L['model']._modules['bn1'].momentum == 0.1"
        v37 = v29.momentum
        if not (type(v37) is float and v37 == 0.1):
            return _rt.Fail(_at, _rt.describe(v37))
        _at = "TENSOR_MATCH L['model']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v38 = v29._buffers
        v39 = v38['running_mean']
        if not (type(v39) is Tensor_7 and v39.dtype is torch.float32 and v39.device == torch.device('cpu') and v39.shape == (64,) and v39.stride() == (1,) and v39.requires_grad is False and v39.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v39))
        _at = "TENSOR_MATCH L['model']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v40 = v38['running_var']
        if not (type(v40) is Tensor_7 and v40.dtype is torch.float32 and v40.device == torch.device('cpu') and v40.shape == (64,) and v40.stride() == (1,) and v40.requires_grad is False and v40.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v40))
        _at = "TENSOR_MATCH L['model']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v41 = v29._parameters
        v42 = v41['weight']
        if not (type(v42) is Parameter_16 and v42.dtype is torch.float32 and v42.device == torch.device('cpu') and v42.shape == (64,) and v42.stride() == (1,) and v42.requires_grad is True and v42.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v42))
        _at = "TENSOR_MATCH L['model']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v43 = v41['bias']
        if not (type(v43) is Parameter_16 and v43.dtype is torch.float32 and v43.device == torch.device('cpu') and v43.shape == (64,) and v43.stride() == (1,) and v43.requires_grad is True and v43.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v43))
        _at = "EQUALS_MATCH L['model']._modules['bn1'].eps == 1e-05"
        v44 = v29.eps
        if not (type(v44) is float and v44 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v44))
        _at = "TYPE_MATCH L['model']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v45 = v6['relu']
        if not (type(v45) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v45))
        _at = "LENGTH_CHECK len(L['model']._modules['relu']._forward_hooks) == 0"
        v46 = v45._forward_hooks
        if not (len(v46) == 0):
            return _rt.Fail(_at, _rt.describe(v46))
        _at = "LENGTH_CHECK len(L['model']._modules['relu']._forward_pre_hooks) == 0"
        v47 = v45._forward_pre_hooks
        if not (len(v47) == 0):
            return _rt.Fail(_at, _rt.describe(v47))
        _at = "LENGTH_CHECK len(L['model']._modules['relu']._backward_hooks) == 0"
        v48 = v45._backward_hooks
        if not (len(v48) == 0):
            return _rt.Fail(_at, _rt.describe(v48))
        _at = "LENGTH_CHECK len(L['model']._modules['relu']._backward_pre_hooks) == 0"
        v49 = v45._backward_pre_hooks
        if not (len(v49) == 0):
            return _rt.Fail(_at, _rt.describe(v49))
        _at = "EQUALS_MATCH L['model']._modules['relu'].training == False"
        v50 = v45.training
        if not (type(v50) is bool and v50 == False):
            return _rt.Fail(_at, _rt.describe(v50))
        _at = "TYPE_MATCH L['model']._modules['maxpool'] (expected torch.nn.modules.pooling.MaxPool2d)"
        v51 = v6['maxpool']
        if not (type(v51) is MaxPool2d_21):
            return _rt.Fail(_at, _rt.describe(v51))
        _at = "LENGTH_CHECK len(L['model']._modules['maxpool']._forward_hooks) == 0"
        v52 = v51._forward_hooks
        if not (len(v52) == 0):
            return _rt.Fail(_at, _rt.describe(v52))
        _at = "LENGTH_CHECK len(L['model']._modules['maxpool']._forward_pre_hooks) == 0"
        v53 = v51._forward_pre_hooks
        if not (len(v53) == 0):
            return _rt.Fail(_at, _rt.describe(v53))
        _at = "LENGTH_CHECK len(L['model']._modules['maxpool']._backward_hooks) == 0"
        v54 = v51._backward_hooks
        if not (len(v54) == 0):
            return _rt.Fail(_at, _rt.describe(v54))
        _at = "LENGTH_CHECK len(L['model']._modules['maxpool']._backward_pre_hooks) == 0"
        v55 = v51._backward_pre_hooks
        if not (len(v55) == 0):
            return _rt.Fail(_at, _rt.describe(v55))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].training == False"
        v56 = v51.training
        if not (type(v56) is bool and v56 == False):
            return _rt.Fail(_at, _rt.describe(v56))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].kernel_size == 3"
        v57 = v51.kernel_size
        if not (type(v57) is int and v57 == 3):
            return _rt.Fail(_at, _rt.describe(v57))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].stride == 2"
        v58 = v51.stride
        if not (type(v58) is int and v58 == 2):
            return _rt.Fail(_at, _rt.describe(v58))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].padding == 1"
        v59 = v51.padding
        if not (type(v59) is int and v59 == 1):
            return _rt.Fail(_at, _rt.describe(v59))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].dilation == 1"
        v60 = v51.dilation
        if not (type(v60) is int and v60 == 1):
            return _rt.Fail(_at, _rt.describe(v60))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].ceil_mode == False"
        v61 = v51.ceil_mode
        if not (type(v61) is bool and v61 == False):
            return _rt.Fail(_at, _rt.describe(v61))
        _at = "EQUALS_MATCH L['model']._modules['maxpool'].return_indices == False"
        v62 = v51.return_indices
        if not (type(v62) is bool and v62 == False):
            return _rt.Fail(_at, _rt.describe(v62))
        _at = "TYPE_MATCH L['model']._modules['layer1'] (expected torch.nn.modules.container.Sequential)"
        v63 = v6['layer1']
        if not (type(v63) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v63))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._forward_hooks) == 0"
        v64 = v63._forward_hooks
        if not (len(v64) == 0):
            return _rt.Fail(_at, _rt.describe(v64))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._forward_pre_hooks) == 0"
        v65 = v63._forward_pre_hooks
        if not (len(v65) == 0):
            return _rt.Fail(_at, _rt.describe(v65))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._backward_hooks) == 0"
        v66 = v63._backward_hooks
        if not (len(v66) == 0):
            return _rt.Fail(_at, _rt.describe(v66))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._backward_pre_hooks) == 0"
        v67 = v63._backward_pre_hooks
        if not (len(v67) == 0):
            return _rt.Fail(_at, _rt.describe(v67))
        _at = "EQUALS_MATCH L['model']._modules['layer1'].training == False"
        v68 = v63.training
        if not (type(v68) is bool and v68 == False):
            return _rt.Fail(_at, _rt.describe(v68))
        _at = "DICT_KEYS L['model']._modules['layer1']._modules == ['0', '1']"
        v69 = v63._modules
        if not (list(v69.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v69))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0'] (expected torchvision.models.resnet.BasicBlock)"
        v70 = v69['0']
        if not (type(v70) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v70))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._forward_hooks) == 0"
        v71 = v70._forward_hooks
        if not (len(v71) == 0):
            return _rt.Fail(_at, _rt.describe(v71))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._forward_pre_hooks) == 0"
        v72 = v70._forward_pre_hooks
        if not (len(v72) == 0):
            return _rt.Fail(_at, _rt.describe(v72))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._backward_hooks) == 0"
        v73 = v70._backward_hooks
        if not (len(v73) == 0):
            return _rt.Fail(_at, _rt.describe(v73))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._backward_pre_hooks) == 0"
        v74 = v70._backward_pre_hooks
        if not (len(v74) == 0):
            return _rt.Fail(_at, _rt.describe(v74))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v75 = v70._modules
        v76 = v75['conv1']
        if not (type(v76) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v76))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._forward_hooks) == 0"
        v77 = v76._forward_hooks
        if not (len(v77) == 0):
            return _rt.Fail(_at, _rt.describe(v77))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._forward_pre_hooks) == 0"
        v78 = v76._forward_pre_hooks
        if not (len(v78) == 0):
            return _rt.Fail(_at, _rt.describe(v78))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._backward_hooks) == 0"
        v79 = v76._backward_hooks
        if not (len(v79) == 0):
            return _rt.Fail(_at, _rt.describe(v79))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1']._backward_pre_hooks) == 0"
        v80 = v76._backward_pre_hooks
        if not (len(v80) == 0):
            return _rt.Fail(_at, _rt.describe(v80))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].training == False"
        v81 = v76.training
        if not (type(v81) is bool and v81 == False):
            return _rt.Fail(_at, _rt.describe(v81))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v82 = v76._conv_forward
        v83 = v82.__func__
        if not (v83 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v83))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64, 64, 3, 3), stride=(576, 9, 3, 1), device=cpu, requires_grad=True))"
        v84 = v76._parameters
        v85 = v84['weight']
        if not (type(v85) is Parameter_16 and v85.dtype is torch.float32 and v85.device == torch.device('cpu') and v85.shape == (64, 64, 3, 3) and v85.stride() == (576, 9, 3, 1) and v85.requires_grad is True and v85.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v85))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1']._parameters['bias'] is None"
        v86 = v84['bias']
        if not (v86 is None):
            return _rt.Fail(_at, _rt.describe(v86))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding_mode == 'zeros'"
        v87 = v76.padding_mode
        if not (type(v87) is str and v87 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v87))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride (expected builtins.tuple)"
        v88 = v76.stride
        if not (type(v88) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v88))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].stride) == 2"
        if not (len(v88) == 2):
            return _rt.Fail(_at, _rt.describe(v88))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride[0] == 1"
        v89 = v88[0]
        if not (type(v89) is int and v89 == 1):
            return _rt.Fail(_at, _rt.describe(v89))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].stride[1] == 1"
        v90 = v88[1]
        if not (type(v90) is int and v90 == 1):
            return _rt.Fail(_at, _rt.describe(v90))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding (expected builtins.tuple)"
        v91 = v76.padding
        if not (type(v91) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v91))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].padding) == 2"
        if not (len(v91) == 2):
            return _rt.Fail(_at, _rt.describe(v91))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding[0] == 1"
        v92 = v91[0]
        if not (type(v92) is int and v92 == 1):
            return _rt.Fail(_at, _rt.describe(v92))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].padding[1] == 1"
        v93 = v91[1]
        if not (type(v93) is int and v93 == 1):
            return _rt.Fail(_at, _rt.describe(v93))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation (expected builtins.tuple)"
        v94 = v76.dilation
        if not (type(v94) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v94))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation) == 2"
        if not (len(v94) == 2):
            return _rt.Fail(_at, _rt.describe(v94))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation[0] == 1"
        v95 = v94[0]
        if not (type(v95) is int and v95 == 1):
            return _rt.Fail(_at, _rt.describe(v95))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].dilation[1] == 1"
        v96 = v94[1]
        if not (type(v96) is int and v96 == 1):
            return _rt.Fail(_at, _rt.describe(v96))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv1'].groups == 1"
        v97 = v76.groups
        if not (type(v97) is int and v97 == 1):
            return _rt.Fail(_at, _rt.describe(v97))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v98 = v75['bn1']
        if not (type(v98) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v98))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._forward_hooks) == 0"
        v99 = v98._forward_hooks
        if not (len(v99) == 0):
            return _rt.Fail(_at, _rt.describe(v99))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._forward_pre_hooks) == 0"
        v100 = v98._forward_pre_hooks
        if not (len(v100) == 0):
            return _rt.Fail(_at, _rt.describe(v100))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._backward_hooks) == 0"
        v101 = v98._backward_hooks
        if not (len(v101) == 0):
            return _rt.Fail(_at, _rt.describe(v101))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn1']._backward_pre_hooks) == 0"
        v102 = v98._backward_pre_hooks
        if not (len(v102) == 0):
            return _rt.Fail(_at, _rt.describe(v102))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].training == False"
        v103 = v98.training
        if not (type(v103) is bool and v103 == False):
            return _rt.Fail(_at, _rt.describe(v103))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v104 = v98._check_input_dim
        v105 = v104.__func__
        if not (v105 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v105))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].momentum == 0.1"
        v106 = v98.momentum
        if not (type(v106) is float and v106 == 0.1):
            return _rt.Fail(_at, _rt.describe(v106))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v107 = v98._buffers
        v108 = v107['running_mean']
        if not (type(v108) is Tensor_7 and v108.dtype is torch.float32 and v108.device == torch.device('cpu') and v108.shape == (64,) and v108.stride() == (1,) and v108.requires_grad is False and v108.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v108))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v109 = v107['running_var']
        if not (type(v109) is Tensor_7 and v109.dtype is torch.float32 and v109.device == torch.device('cpu') and v109.shape == (64,) and v109.stride() == (1,) and v109.requires_grad is False and v109.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v109))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v110 = v98._parameters
        v111 = v110['weight']
        if not (type(v111) is Parameter_16 and v111.dtype is torch.float32 and v111.device == torch.device('cpu') and v111.shape == (64,) and v111.stride() == (1,) and v111.requires_grad is True and v111.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v111))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v112 = v110['bias']
        if not (type(v112) is Parameter_16 and v112.dtype is torch.float32 and v112.device == torch.device('cpu') and v112.shape == (64,) and v112.stride() == (1,) and v112.requires_grad is True and v112.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v112))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn1'].eps == 1e-05"
        v113 = v98.eps
        if not (type(v113) is float and v113 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v113))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v114 = v75['relu']
        if not (type(v114) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v114))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._forward_hooks) == 0"
        v115 = v114._forward_hooks
        if not (len(v115) == 0):
            return _rt.Fail(_at, _rt.describe(v115))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._forward_pre_hooks) == 0"
        v116 = v114._forward_pre_hooks
        if not (len(v116) == 0):
            return _rt.Fail(_at, _rt.describe(v116))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._backward_hooks) == 0"
        v117 = v114._backward_hooks
        if not (len(v117) == 0):
            return _rt.Fail(_at, _rt.describe(v117))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['relu']._backward_pre_hooks) == 0"
        v118 = v114._backward_pre_hooks
        if not (len(v118) == 0):
            return _rt.Fail(_at, _rt.describe(v118))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['relu'].training == False"
        v119 = v114.training
        if not (type(v119) is bool and v119 == False):
            return _rt.Fail(_at, _rt.describe(v119))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v120 = v75['conv2']
        if not (type(v120) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v120))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._forward_hooks) == 0"
        v121 = v120._forward_hooks
        if not (len(v121) == 0):
            return _rt.Fail(_at, _rt.describe(v121))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._forward_pre_hooks) == 0"
        v122 = v120._forward_pre_hooks
        if not (len(v122) == 0):
            return _rt.Fail(_at, _rt.describe(v122))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._backward_hooks) == 0"
        v123 = v120._backward_hooks
        if not (len(v123) == 0):
            return _rt.Fail(_at, _rt.describe(v123))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2']._backward_pre_hooks) == 0"
        v124 = v120._backward_pre_hooks
        if not (len(v124) == 0):
            return _rt.Fail(_at, _rt.describe(v124))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].training == False"
        v125 = v120.training
        if not (type(v125) is bool and v125 == False):
            return _rt.Fail(_at, _rt.describe(v125))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v126 = v120._conv_forward
        v127 = v126.__func__
        if not (v127 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v127))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64, 64, 3, 3), stride=(576, 9, 3, 1), device=cpu, requires_grad=True))"
        v128 = v120._parameters
        v129 = v128['weight']
        if not (type(v129) is Parameter_16 and v129.dtype is torch.float32 and v129.device == torch.device('cpu') and v129.shape == (64, 64, 3, 3) and v129.stride() == (576, 9, 3, 1) and v129.requires_grad is True and v129.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v129))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2']._parameters['bias'] is None"
        v130 = v128['bias']
        if not (v130 is None):
            return _rt.Fail(_at, _rt.describe(v130))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding_mode == 'zeros'"
        v131 = v120.padding_mode
        if not (type(v131) is str and v131 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v131))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride (expected builtins.tuple)"
        v132 = v120.stride
        if not (type(v132) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v132))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].stride) == 2"
        if not (len(v132) == 2):
            return _rt.Fail(_at, _rt.describe(v132))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride[0] == 1"
        v133 = v132[0]
        if not (type(v133) is int and v133 == 1):
            return _rt.Fail(_at, _rt.describe(v133))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].stride[1] == 1"
        v134 = v132[1]
        if not (type(v134) is int and v134 == 1):
            return _rt.Fail(_at, _rt.describe(v134))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding (expected builtins.tuple)"
        v135 = v120.padding
        if not (type(v135) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v135))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].padding) == 2"
        if not (len(v135) == 2):
            return _rt.Fail(_at, _rt.describe(v135))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding[0] == 1"
        v136 = v135[0]
        if not (type(v136) is int and v136 == 1):
            return _rt.Fail(_at, _rt.describe(v136))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].padding[1] == 1"
        v137 = v135[1]
        if not (type(v137) is int and v137 == 1):
            return _rt.Fail(_at, _rt.describe(v137))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation (expected builtins.tuple)"
        v138 = v120.dilation
        if not (type(v138) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v138))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation) == 2"
        if not (len(v138) == 2):
            return _rt.Fail(_at, _rt.describe(v138))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation[0] == 1"
        v139 = v138[0]
        if not (type(v139) is int and v139 == 1):
            return _rt.Fail(_at, _rt.describe(v139))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].dilation[1] == 1"
        v140 = v138[1]
        if not (type(v140) is int and v140 == 1):
            return _rt.Fail(_at, _rt.describe(v140))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['conv2'].groups == 1"
        v141 = v120.groups
        if not (type(v141) is int and v141 == 1):
            return _rt.Fail(_at, _rt.describe(v141))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v142 = v75['bn2']
        if not (type(v142) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v142))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._forward_hooks) == 0"
        v143 = v142._forward_hooks
        if not (len(v143) == 0):
            return _rt.Fail(_at, _rt.describe(v143))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._forward_pre_hooks) == 0"
        v144 = v142._forward_pre_hooks
        if not (len(v144) == 0):
            return _rt.Fail(_at, _rt.describe(v144))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._backward_hooks) == 0"
        v145 = v142._backward_hooks
        if not (len(v145) == 0):
            return _rt.Fail(_at, _rt.describe(v145))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['0']._modules['bn2']._backward_pre_hooks) == 0"
        v146 = v142._backward_pre_hooks
        if not (len(v146) == 0):
            return _rt.Fail(_at, _rt.describe(v146))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].training == False"
        v147 = v142.training
        if not (type(v147) is bool and v147 == False):
            return _rt.Fail(_at, _rt.describe(v147))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v148 = v142._check_input_dim
        v149 = v148.__func__
        if not (v149 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v149))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].momentum == 0.1"
        v150 = v142.momentum
        if not (type(v150) is float and v150 == 0.1):
            return _rt.Fail(_at, _rt.describe(v150))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v151 = v142._buffers
        v152 = v151['running_mean']
        if not (type(v152) is Tensor_7 and v152.dtype is torch.float32 and v152.device == torch.device('cpu') and v152.shape == (64,) and v152.stride() == (1,) and v152.requires_grad is False and v152.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v152))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v153 = v151['running_var']
        if not (type(v153) is Tensor_7 and v153.dtype is torch.float32 and v153.device == torch.device('cpu') and v153.shape == (64,) and v153.stride() == (1,) and v153.requires_grad is False and v153.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v153))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v154 = v142._parameters
        v155 = v154['weight']
        if not (type(v155) is Parameter_16 and v155.dtype is torch.float32 and v155.device == torch.device('cpu') and v155.shape == (64,) and v155.stride() == (1,) and v155.requires_grad is True and v155.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v155))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v156 = v154['bias']
        if not (type(v156) is Parameter_16 and v156.dtype is torch.float32 and v156.device == torch.device('cpu') and v156.shape == (64,) and v156.stride() == (1,) and v156.requires_grad is True and v156.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v156))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['0']._modules['bn2'].eps == 1e-05"
        v157 = v142.eps
        if not (type(v157) is float and v157 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v157))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['0'].downsample is None"
        v158 = v70.downsample
        if not (v158 is None):
            return _rt.Fail(_at, _rt.describe(v158))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1'] (expected torchvision.models.resnet.BasicBlock)"
        v159 = v69['1']
        if not (type(v159) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v159))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._forward_hooks) == 0"
        v160 = v159._forward_hooks
        if not (len(v160) == 0):
            return _rt.Fail(_at, _rt.describe(v160))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._forward_pre_hooks) == 0"
        v161 = v159._forward_pre_hooks
        if not (len(v161) == 0):
            return _rt.Fail(_at, _rt.describe(v161))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._backward_hooks) == 0"
        v162 = v159._backward_hooks
        if not (len(v162) == 0):
            return _rt.Fail(_at, _rt.describe(v162))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._backward_pre_hooks) == 0"
        v163 = v159._backward_pre_hooks
        if not (len(v163) == 0):
            return _rt.Fail(_at, _rt.describe(v163))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v164 = v159._modules
        v165 = v164['conv1']
        if not (type(v165) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v165))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._forward_hooks) == 0"
        v166 = v165._forward_hooks
        if not (len(v166) == 0):
            return _rt.Fail(_at, _rt.describe(v166))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._forward_pre_hooks) == 0"
        v167 = v165._forward_pre_hooks
        if not (len(v167) == 0):
            return _rt.Fail(_at, _rt.describe(v167))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._backward_hooks) == 0"
        v168 = v165._backward_hooks
        if not (len(v168) == 0):
            return _rt.Fail(_at, _rt.describe(v168))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1']._backward_pre_hooks) == 0"
        v169 = v165._backward_pre_hooks
        if not (len(v169) == 0):
            return _rt.Fail(_at, _rt.describe(v169))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].training == False"
        v170 = v165.training
        if not (type(v170) is bool and v170 == False):
            return _rt.Fail(_at, _rt.describe(v170))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v171 = v165._conv_forward
        v172 = v171.__func__
        if not (v172 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v172))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64, 64, 3, 3), stride=(576, 9, 3, 1), device=cpu, requires_grad=True))"
        v173 = v165._parameters
        v174 = v173['weight']
        if not (type(v174) is Parameter_16 and v174.dtype is torch.float32 and v174.device == torch.device('cpu') and v174.shape == (64, 64, 3, 3) and v174.stride() == (576, 9, 3, 1) and v174.requires_grad is True and v174.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v174))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1']._parameters['bias'] is None"
        v175 = v173['bias']
        if not (v175 is None):
            return _rt.Fail(_at, _rt.describe(v175))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding_mode == 'zeros'"
        v176 = v165.padding_mode
        if not (type(v176) is str and v176 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v176))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride (expected builtins.tuple)"
        v177 = v165.stride
        if not (type(v177) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v177))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].stride) == 2"
        if not (len(v177) == 2):
            return _rt.Fail(_at, _rt.describe(v177))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride[0] == 1"
        v178 = v177[0]
        if not (type(v178) is int and v178 == 1):
            return _rt.Fail(_at, _rt.describe(v178))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].stride[1] == 1"
        v179 = v177[1]
        if not (type(v179) is int and v179 == 1):
            return _rt.Fail(_at, _rt.describe(v179))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding (expected builtins.tuple)"
        v180 = v165.padding
        if not (type(v180) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v180))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].padding) == 2"
        if not (len(v180) == 2):
            return _rt.Fail(_at, _rt.describe(v180))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding[0] == 1"
        v181 = v180[0]
        if not (type(v181) is int and v181 == 1):
            return _rt.Fail(_at, _rt.describe(v181))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].padding[1] == 1"
        v182 = v180[1]
        if not (type(v182) is int and v182 == 1):
            return _rt.Fail(_at, _rt.describe(v182))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation (expected builtins.tuple)"
        v183 = v165.dilation
        if not (type(v183) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v183))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation) == 2"
        if not (len(v183) == 2):
            return _rt.Fail(_at, _rt.describe(v183))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation[0] == 1"
        v184 = v183[0]
        if not (type(v184) is int and v184 == 1):
            return _rt.Fail(_at, _rt.describe(v184))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].dilation[1] == 1"
        v185 = v183[1]
        if not (type(v185) is int and v185 == 1):
            return _rt.Fail(_at, _rt.describe(v185))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv1'].groups == 1"
        v186 = v165.groups
        if not (type(v186) is int and v186 == 1):
            return _rt.Fail(_at, _rt.describe(v186))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v187 = v164['bn1']
        if not (type(v187) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v187))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._forward_hooks) == 0"
        v188 = v187._forward_hooks
        if not (len(v188) == 0):
            return _rt.Fail(_at, _rt.describe(v188))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._forward_pre_hooks) == 0"
        v189 = v187._forward_pre_hooks
        if not (len(v189) == 0):
            return _rt.Fail(_at, _rt.describe(v189))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._backward_hooks) == 0"
        v190 = v187._backward_hooks
        if not (len(v190) == 0):
            return _rt.Fail(_at, _rt.describe(v190))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn1']._backward_pre_hooks) == 0"
        v191 = v187._backward_pre_hooks
        if not (len(v191) == 0):
            return _rt.Fail(_at, _rt.describe(v191))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].training == False"
        v192 = v187.training
        if not (type(v192) is bool and v192 == False):
            return _rt.Fail(_at, _rt.describe(v192))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v193 = v187._check_input_dim
        v194 = v193.__func__
        if not (v194 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v194))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].momentum == 0.1"
        v195 = v187.momentum
        if not (type(v195) is float and v195 == 0.1):
            return _rt.Fail(_at, _rt.describe(v195))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v196 = v187._buffers
        v197 = v196['running_mean']
        if not (type(v197) is Tensor_7 and v197.dtype is torch.float32 and v197.device == torch.device('cpu') and v197.shape == (64,) and v197.stride() == (1,) and v197.requires_grad is False and v197.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v197))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v198 = v196['running_var']
        if not (type(v198) is Tensor_7 and v198.dtype is torch.float32 and v198.device == torch.device('cpu') and v198.shape == (64,) and v198.stride() == (1,) and v198.requires_grad is False and v198.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v198))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v199 = v187._parameters
        v200 = v199['weight']
        if not (type(v200) is Parameter_16 and v200.dtype is torch.float32 and v200.device == torch.device('cpu') and v200.shape == (64,) and v200.stride() == (1,) and v200.requires_grad is True and v200.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v200))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v201 = v199['bias']
        if not (type(v201) is Parameter_16 and v201.dtype is torch.float32 and v201.device == torch.device('cpu') and v201.shape == (64,) and v201.stride() == (1,) and v201.requires_grad is True and v201.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v201))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn1'].eps == 1e-05"
        v202 = v187.eps
        if not (type(v202) is float and v202 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v202))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v203 = v164['relu']
        if not (type(v203) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v203))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._forward_hooks) == 0"
        v204 = v203._forward_hooks
        if not (len(v204) == 0):
            return _rt.Fail(_at, _rt.describe(v204))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._forward_pre_hooks) == 0"
        v205 = v203._forward_pre_hooks
        if not (len(v205) == 0):
            return _rt.Fail(_at, _rt.describe(v205))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._backward_hooks) == 0"
        v206 = v203._backward_hooks
        if not (len(v206) == 0):
            return _rt.Fail(_at, _rt.describe(v206))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['relu']._backward_pre_hooks) == 0"
        v207 = v203._backward_pre_hooks
        if not (len(v207) == 0):
            return _rt.Fail(_at, _rt.describe(v207))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['relu'].training == False"
        v208 = v203.training
        if not (type(v208) is bool and v208 == False):
            return _rt.Fail(_at, _rt.describe(v208))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v209 = v164['conv2']
        if not (type(v209) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v209))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._forward_hooks) == 0"
        v210 = v209._forward_hooks
        if not (len(v210) == 0):
            return _rt.Fail(_at, _rt.describe(v210))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._forward_pre_hooks) == 0"
        v211 = v209._forward_pre_hooks
        if not (len(v211) == 0):
            return _rt.Fail(_at, _rt.describe(v211))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._backward_hooks) == 0"
        v212 = v209._backward_hooks
        if not (len(v212) == 0):
            return _rt.Fail(_at, _rt.describe(v212))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2']._backward_pre_hooks) == 0"
        v213 = v209._backward_pre_hooks
        if not (len(v213) == 0):
            return _rt.Fail(_at, _rt.describe(v213))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].training == False"
        v214 = v209.training
        if not (type(v214) is bool and v214 == False):
            return _rt.Fail(_at, _rt.describe(v214))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v215 = v209._conv_forward
        v216 = v215.__func__
        if not (v216 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v216))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64, 64, 3, 3), stride=(576, 9, 3, 1), device=cpu, requires_grad=True))"
        v217 = v209._parameters
        v218 = v217['weight']
        if not (type(v218) is Parameter_16 and v218.dtype is torch.float32 and v218.device == torch.device('cpu') and v218.shape == (64, 64, 3, 3) and v218.stride() == (576, 9, 3, 1) and v218.requires_grad is True and v218.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v218))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2']._parameters['bias'] is None"
        v219 = v217['bias']
        if not (v219 is None):
            return _rt.Fail(_at, _rt.describe(v219))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding_mode == 'zeros'"
        v220 = v209.padding_mode
        if not (type(v220) is str and v220 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v220))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride (expected builtins.tuple)"
        v221 = v209.stride
        if not (type(v221) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v221))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].stride) == 2"
        if not (len(v221) == 2):
            return _rt.Fail(_at, _rt.describe(v221))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride[0] == 1"
        v222 = v221[0]
        if not (type(v222) is int and v222 == 1):
            return _rt.Fail(_at, _rt.describe(v222))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].stride[1] == 1"
        v223 = v221[1]
        if not (type(v223) is int and v223 == 1):
            return _rt.Fail(_at, _rt.describe(v223))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding (expected builtins.tuple)"
        v224 = v209.padding
        if not (type(v224) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v224))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].padding) == 2"
        if not (len(v224) == 2):
            return _rt.Fail(_at, _rt.describe(v224))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding[0] == 1"
        v225 = v224[0]
        if not (type(v225) is int and v225 == 1):
            return _rt.Fail(_at, _rt.describe(v225))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].padding[1] == 1"
        v226 = v224[1]
        if not (type(v226) is int and v226 == 1):
            return _rt.Fail(_at, _rt.describe(v226))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation (expected builtins.tuple)"
        v227 = v209.dilation
        if not (type(v227) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v227))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation) == 2"
        if not (len(v227) == 2):
            return _rt.Fail(_at, _rt.describe(v227))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation[0] == 1"
        v228 = v227[0]
        if not (type(v228) is int and v228 == 1):
            return _rt.Fail(_at, _rt.describe(v228))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].dilation[1] == 1"
        v229 = v227[1]
        if not (type(v229) is int and v229 == 1):
            return _rt.Fail(_at, _rt.describe(v229))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['conv2'].groups == 1"
        v230 = v209.groups
        if not (type(v230) is int and v230 == 1):
            return _rt.Fail(_at, _rt.describe(v230))
        _at = "TYPE_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v231 = v164['bn2']
        if not (type(v231) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v231))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._forward_hooks) == 0"
        v232 = v231._forward_hooks
        if not (len(v232) == 0):
            return _rt.Fail(_at, _rt.describe(v232))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._forward_pre_hooks) == 0"
        v233 = v231._forward_pre_hooks
        if not (len(v233) == 0):
            return _rt.Fail(_at, _rt.describe(v233))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._backward_hooks) == 0"
        v234 = v231._backward_hooks
        if not (len(v234) == 0):
            return _rt.Fail(_at, _rt.describe(v234))
        _at = "LENGTH_CHECK len(L['model']._modules['layer1']._modules['1']._modules['bn2']._backward_pre_hooks) == 0"
        v235 = v231._backward_pre_hooks
        if not (len(v235) == 0):
            return _rt.Fail(_at, _rt.describe(v235))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].training == False"
        v236 = v231.training
        if not (type(v236) is bool and v236 == False):
            return _rt.Fail(_at, _rt.describe(v236))
        _at = "ID_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v237 = v231._check_input_dim
        v238 = v237.__func__
        if not (v238 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v238))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].momentum == 0.1"
        v239 = v231.momentum
        if not (type(v239) is float and v239 == 0.1):
            return _rt.Fail(_at, _rt.describe(v239))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v240 = v231._buffers
        v241 = v240['running_mean']
        if not (type(v241) is Tensor_7 and v241.dtype is torch.float32 and v241.device == torch.device('cpu') and v241.shape == (64,) and v241.stride() == (1,) and v241.requires_grad is False and v241.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v241))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=False))"
        v242 = v240['running_var']
        if not (type(v242) is Tensor_7 and v242.dtype is torch.float32 and v242.device == torch.device('cpu') and v242.shape == (64,) and v242.stride() == (1,) and v242.requires_grad is False and v242.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v242))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v243 = v231._parameters
        v244 = v243['weight']
        if not (type(v244) is Parameter_16 and v244.dtype is torch.float32 and v244.device == torch.device('cpu') and v244.shape == (64,) and v244.stride() == (1,) and v244.requires_grad is True and v244.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v244))
        _at = "TENSOR_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(64,), stride=(1,), device=cpu, requires_grad=True))"
        v245 = v243['bias']
        if not (type(v245) is Parameter_16 and v245.dtype is torch.float32 and v245.device == torch.device('cpu') and v245.shape == (64,) and v245.stride() == (1,) and v245.requires_grad is True and v245.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v245))
        _at = "EQUALS_MATCH L['model']._modules['layer1']._modules['1']._modules['bn2'].eps == 1e-05"
        v246 = v231.eps
        if not (type(v246) is float and v246 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v246))
        _at = "NONE_MATCH L['model']._modules['layer1']._modules['1'].downsample is None"
        v247 = v159.downsample
        if not (v247 is None):
            return _rt.Fail(_at, _rt.describe(v247))
        _at = "TYPE_MATCH L['model']._modules['layer2'] (expected torch.nn.modules.container.Sequential)"
        v248 = v6['layer2']
        if not (type(v248) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v248))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._forward_hooks) == 0"
        v249 = v248._forward_hooks
        if not (len(v249) == 0):
            return _rt.Fail(_at, _rt.describe(v249))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._forward_pre_hooks) == 0"
        v250 = v248._forward_pre_hooks
        if not (len(v250) == 0):
            return _rt.Fail(_at, _rt.describe(v250))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._backward_hooks) == 0"
        v251 = v248._backward_hooks
        if not (len(v251) == 0):
            return _rt.Fail(_at, _rt.describe(v251))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._backward_pre_hooks) == 0"
        v252 = v248._backward_pre_hooks
        if not (len(v252) == 0):
            return _rt.Fail(_at, _rt.describe(v252))
        _at = "EQUALS_MATCH L['model']._modules['layer2'].training == False"
        v253 = v248.training
        if not (type(v253) is bool and v253 == False):
            return _rt.Fail(_at, _rt.describe(v253))
        _at = "DICT_KEYS L['model']._modules['layer2']._modules == ['0', '1']"
        v254 = v248._modules
        if not (list(v254.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v254))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0'] (expected torchvision.models.resnet.BasicBlock)"
        v255 = v254['0']
        if not (type(v255) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v255))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._forward_hooks) == 0"
        v256 = v255._forward_hooks
        if not (len(v256) == 0):
            return _rt.Fail(_at, _rt.describe(v256))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._forward_pre_hooks) == 0"
        v257 = v255._forward_pre_hooks
        if not (len(v257) == 0):
            return _rt.Fail(_at, _rt.describe(v257))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._backward_hooks) == 0"
        v258 = v255._backward_hooks
        if not (len(v258) == 0):
            return _rt.Fail(_at, _rt.describe(v258))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._backward_pre_hooks) == 0"
        v259 = v255._backward_pre_hooks
        if not (len(v259) == 0):
            return _rt.Fail(_at, _rt.describe(v259))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v260 = v255._modules
        v261 = v260['conv1']
        if not (type(v261) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v261))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._forward_hooks) == 0"
        v262 = v261._forward_hooks
        if not (len(v262) == 0):
            return _rt.Fail(_at, _rt.describe(v262))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._forward_pre_hooks) == 0"
        v263 = v261._forward_pre_hooks
        if not (len(v263) == 0):
            return _rt.Fail(_at, _rt.describe(v263))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._backward_hooks) == 0"
        v264 = v261._backward_hooks
        if not (len(v264) == 0):
            return _rt.Fail(_at, _rt.describe(v264))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1']._backward_pre_hooks) == 0"
        v265 = v261._backward_pre_hooks
        if not (len(v265) == 0):
            return _rt.Fail(_at, _rt.describe(v265))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].training == False"
        v266 = v261.training
        if not (type(v266) is bool and v266 == False):
            return _rt.Fail(_at, _rt.describe(v266))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v267 = v261._conv_forward
        v268 = v267.__func__
        if not (v268 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v268))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128, 64, 3, 3), stride=(576, 9, 3, 1), device=cpu, requires_grad=True))"
        v269 = v261._parameters
        v270 = v269['weight']
        if not (type(v270) is Parameter_16 and v270.dtype is torch.float32 and v270.device == torch.device('cpu') and v270.shape == (128, 64, 3, 3) and v270.stride() == (576, 9, 3, 1) and v270.requires_grad is True and v270.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v270))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1']._parameters['bias'] is None"
        v271 = v269['bias']
        if not (v271 is None):
            return _rt.Fail(_at, _rt.describe(v271))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding_mode == 'zeros'"
        v272 = v261.padding_mode
        if not (type(v272) is str and v272 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v272))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride (expected builtins.tuple)"
        v273 = v261.stride
        if not (type(v273) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v273))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].stride) == 2"
        if not (len(v273) == 2):
            return _rt.Fail(_at, _rt.describe(v273))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride[0] == 2"
        v274 = v273[0]
        if not (type(v274) is int and v274 == 2):
            return _rt.Fail(_at, _rt.describe(v274))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].stride[1] == 2"
        v275 = v273[1]
        if not (type(v275) is int and v275 == 2):
            return _rt.Fail(_at, _rt.describe(v275))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding (expected builtins.tuple)"
        v276 = v261.padding
        if not (type(v276) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v276))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].padding) == 2"
        if not (len(v276) == 2):
            return _rt.Fail(_at, _rt.describe(v276))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding[0] == 1"
        v277 = v276[0]
        if not (type(v277) is int and v277 == 1):
            return _rt.Fail(_at, _rt.describe(v277))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].padding[1] == 1"
        v278 = v276[1]
        if not (type(v278) is int and v278 == 1):
            return _rt.Fail(_at, _rt.describe(v278))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation (expected builtins.tuple)"
        v279 = v261.dilation
        if not (type(v279) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v279))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation) == 2"
        if not (len(v279) == 2):
            return _rt.Fail(_at, _rt.describe(v279))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation[0] == 1"
        v280 = v279[0]
        if not (type(v280) is int and v280 == 1):
            return _rt.Fail(_at, _rt.describe(v280))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].dilation[1] == 1"
        v281 = v279[1]
        if not (type(v281) is int and v281 == 1):
            return _rt.Fail(_at, _rt.describe(v281))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv1'].groups == 1"
        v282 = v261.groups
        if not (type(v282) is int and v282 == 1):
            return _rt.Fail(_at, _rt.describe(v282))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v283 = v260['bn1']
        if not (type(v283) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v283))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._forward_hooks) == 0"
        v284 = v283._forward_hooks
        if not (len(v284) == 0):
            return _rt.Fail(_at, _rt.describe(v284))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._forward_pre_hooks) == 0"
        v285 = v283._forward_pre_hooks
        if not (len(v285) == 0):
            return _rt.Fail(_at, _rt.describe(v285))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._backward_hooks) == 0"
        v286 = v283._backward_hooks
        if not (len(v286) == 0):
            return _rt.Fail(_at, _rt.describe(v286))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn1']._backward_pre_hooks) == 0"
        v287 = v283._backward_pre_hooks
        if not (len(v287) == 0):
            return _rt.Fail(_at, _rt.describe(v287))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].training == False"
        v288 = v283.training
        if not (type(v288) is bool and v288 == False):
            return _rt.Fail(_at, _rt.describe(v288))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v289 = v283._check_input_dim
        v290 = v289.__func__
        if not (v290 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v290))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].momentum == 0.1"
        v291 = v283.momentum
        if not (type(v291) is float and v291 == 0.1):
            return _rt.Fail(_at, _rt.describe(v291))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v292 = v283._buffers
        v293 = v292['running_mean']
        if not (type(v293) is Tensor_7 and v293.dtype is torch.float32 and v293.device == torch.device('cpu') and v293.shape == (128,) and v293.stride() == (1,) and v293.requires_grad is False and v293.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v293))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v294 = v292['running_var']
        if not (type(v294) is Tensor_7 and v294.dtype is torch.float32 and v294.device == torch.device('cpu') and v294.shape == (128,) and v294.stride() == (1,) and v294.requires_grad is False and v294.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v294))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v295 = v283._parameters
        v296 = v295['weight']
        if not (type(v296) is Parameter_16 and v296.dtype is torch.float32 and v296.device == torch.device('cpu') and v296.shape == (128,) and v296.stride() == (1,) and v296.requires_grad is True and v296.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v296))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v297 = v295['bias']
        if not (type(v297) is Parameter_16 and v297.dtype is torch.float32 and v297.device == torch.device('cpu') and v297.shape == (128,) and v297.stride() == (1,) and v297.requires_grad is True and v297.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v297))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn1'].eps == 1e-05"
        v298 = v283.eps
        if not (type(v298) is float and v298 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v298))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v299 = v260['relu']
        if not (type(v299) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v299))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._forward_hooks) == 0"
        v300 = v299._forward_hooks
        if not (len(v300) == 0):
            return _rt.Fail(_at, _rt.describe(v300))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._forward_pre_hooks) == 0"
        v301 = v299._forward_pre_hooks
        if not (len(v301) == 0):
            return _rt.Fail(_at, _rt.describe(v301))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._backward_hooks) == 0"
        v302 = v299._backward_hooks
        if not (len(v302) == 0):
            return _rt.Fail(_at, _rt.describe(v302))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['relu']._backward_pre_hooks) == 0"
        v303 = v299._backward_pre_hooks
        if not (len(v303) == 0):
            return _rt.Fail(_at, _rt.describe(v303))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['relu'].training == False"
        v304 = v299.training
        if not (type(v304) is bool and v304 == False):
            return _rt.Fail(_at, _rt.describe(v304))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v305 = v260['conv2']
        if not (type(v305) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v305))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._forward_hooks) == 0"
        v306 = v305._forward_hooks
        if not (len(v306) == 0):
            return _rt.Fail(_at, _rt.describe(v306))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._forward_pre_hooks) == 0"
        v307 = v305._forward_pre_hooks
        if not (len(v307) == 0):
            return _rt.Fail(_at, _rt.describe(v307))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._backward_hooks) == 0"
        v308 = v305._backward_hooks
        if not (len(v308) == 0):
            return _rt.Fail(_at, _rt.describe(v308))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2']._backward_pre_hooks) == 0"
        v309 = v305._backward_pre_hooks
        if not (len(v309) == 0):
            return _rt.Fail(_at, _rt.describe(v309))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].training == False"
        v310 = v305.training
        if not (type(v310) is bool and v310 == False):
            return _rt.Fail(_at, _rt.describe(v310))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v311 = v305._conv_forward
        v312 = v311.__func__
        if not (v312 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v312))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128, 128, 3, 3), stride=(1152, 9, 3, 1), device=cpu, requires_grad=True))"
        v313 = v305._parameters
        v314 = v313['weight']
        if not (type(v314) is Parameter_16 and v314.dtype is torch.float32 and v314.device == torch.device('cpu') and v314.shape == (128, 128, 3, 3) and v314.stride() == (1152, 9, 3, 1) and v314.requires_grad is True and v314.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v314))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2']._parameters['bias'] is None"
        v315 = v313['bias']
        if not (v315 is None):
            return _rt.Fail(_at, _rt.describe(v315))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding_mode == 'zeros'"
        v316 = v305.padding_mode
        if not (type(v316) is str and v316 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v316))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride (expected builtins.tuple)"
        v317 = v305.stride
        if not (type(v317) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v317))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].stride) == 2"
        if not (len(v317) == 2):
            return _rt.Fail(_at, _rt.describe(v317))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride[0] == 1"
        v318 = v317[0]
        if not (type(v318) is int and v318 == 1):
            return _rt.Fail(_at, _rt.describe(v318))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].stride[1] == 1"
        v319 = v317[1]
        if not (type(v319) is int and v319 == 1):
            return _rt.Fail(_at, _rt.describe(v319))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding (expected builtins.tuple)"
        v320 = v305.padding
        if not (type(v320) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v320))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].padding) == 2"
        if not (len(v320) == 2):
            return _rt.Fail(_at, _rt.describe(v320))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding[0] == 1"
        v321 = v320[0]
        if not (type(v321) is int and v321 == 1):
            return _rt.Fail(_at, _rt.describe(v321))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].padding[1] == 1"
        v322 = v320[1]
        if not (type(v322) is int and v322 == 1):
            return _rt.Fail(_at, _rt.describe(v322))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation (expected builtins.tuple)"
        v323 = v305.dilation
        if not (type(v323) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v323))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation) == 2"
        if not (len(v323) == 2):
            return _rt.Fail(_at, _rt.describe(v323))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation[0] == 1"
        v324 = v323[0]
        if not (type(v324) is int and v324 == 1):
            return _rt.Fail(_at, _rt.describe(v324))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].dilation[1] == 1"
        v325 = v323[1]
        if not (type(v325) is int and v325 == 1):
            return _rt.Fail(_at, _rt.describe(v325))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['conv2'].groups == 1"
        v326 = v305.groups
        if not (type(v326) is int and v326 == 1):
            return _rt.Fail(_at, _rt.describe(v326))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v327 = v260['bn2']
        if not (type(v327) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v327))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._forward_hooks) == 0"
        v328 = v327._forward_hooks
        if not (len(v328) == 0):
            return _rt.Fail(_at, _rt.describe(v328))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._forward_pre_hooks) == 0"
        v329 = v327._forward_pre_hooks
        if not (len(v329) == 0):
            return _rt.Fail(_at, _rt.describe(v329))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._backward_hooks) == 0"
        v330 = v327._backward_hooks
        if not (len(v330) == 0):
            return _rt.Fail(_at, _rt.describe(v330))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['bn2']._backward_pre_hooks) == 0"
        v331 = v327._backward_pre_hooks
        if not (len(v331) == 0):
            return _rt.Fail(_at, _rt.describe(v331))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].training == False"
        v332 = v327.training
        if not (type(v332) is bool and v332 == False):
            return _rt.Fail(_at, _rt.describe(v332))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v333 = v327._check_input_dim
        v334 = v333.__func__
        if not (v334 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v334))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].momentum == 0.1"
        v335 = v327.momentum
        if not (type(v335) is float and v335 == 0.1):
            return _rt.Fail(_at, _rt.describe(v335))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v336 = v327._buffers
        v337 = v336['running_mean']
        if not (type(v337) is Tensor_7 and v337.dtype is torch.float32 and v337.device == torch.device('cpu') and v337.shape == (128,) and v337.stride() == (1,) and v337.requires_grad is False and v337.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v337))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v338 = v336['running_var']
        if not (type(v338) is Tensor_7 and v338.dtype is torch.float32 and v338.device == torch.device('cpu') and v338.shape == (128,) and v338.stride() == (1,) and v338.requires_grad is False and v338.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v338))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v339 = v327._parameters
        v340 = v339['weight']
        if not (type(v340) is Parameter_16 and v340.dtype is torch.float32 and v340.device == torch.device('cpu') and v340.shape == (128,) and v340.stride() == (1,) and v340.requires_grad is True and v340.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v340))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v341 = v339['bias']
        if not (type(v341) is Parameter_16 and v341.dtype is torch.float32 and v341.device == torch.device('cpu') and v341.shape == (128,) and v341.stride() == (1,) and v341.requires_grad is True and v341.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v341))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['bn2'].eps == 1e-05"
        v342 = v327.eps
        if not (type(v342) is float and v342 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v342))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample'] (expected torch.nn.modules.container.Sequential)"
        v343 = v260['downsample']
        if not (type(v343) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v343))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._forward_hooks) == 0"
        v344 = v343._forward_hooks
        if not (len(v344) == 0):
            return _rt.Fail(_at, _rt.describe(v344))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._forward_pre_hooks) == 0"
        v345 = v343._forward_pre_hooks
        if not (len(v345) == 0):
            return _rt.Fail(_at, _rt.describe(v345))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._backward_hooks) == 0"
        v346 = v343._backward_hooks
        if not (len(v346) == 0):
            return _rt.Fail(_at, _rt.describe(v346))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._backward_pre_hooks) == 0"
        v347 = v343._backward_pre_hooks
        if not (len(v347) == 0):
            return _rt.Fail(_at, _rt.describe(v347))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample'].training == False"
        v348 = v343.training
        if not (type(v348) is bool and v348 == False):
            return _rt.Fail(_at, _rt.describe(v348))
        _at = "DICT_KEYS L['model']._modules['layer2']._modules['0']._modules['downsample']._modules == ['0', '1']"
        v349 = v343._modules
        if not (list(v349.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v349))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'] (expected torch.nn.modules.conv.Conv2d)"
        v350 = v349['0']
        if not (type(v350) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v350))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0"
        v351 = v350._forward_hooks
        if not (len(v351) == 0):
            return _rt.Fail(_at, _rt.describe(v351))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0"
        v352 = v350._forward_pre_hooks
        if not (len(v352) == 0):
            return _rt.Fail(_at, _rt.describe(v352))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0"
        v353 = v350._backward_hooks
        if not (len(v353) == 0):
            return _rt.Fail(_at, _rt.describe(v353))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0"
        v354 = v350._backward_pre_hooks
        if not (len(v354) == 0):
            return _rt.Fail(_at, _rt.describe(v354))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].training == False"
        v355 = v350.training
        if not (type(v355) is bool and v355 == False):
            return _rt.Fail(_at, _rt.describe(v355))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v356 = v350._conv_forward
        v357 = v356.__func__
        if not (v357 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v357))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128, 64, 1, 1), stride=(64, 1, 1, 1), device=cpu, requires_grad=True))"
        v358 = v350._parameters
        v359 = v358['weight']
        if not (type(v359) is Parameter_16 and v359.dtype is torch.float32 and v359.device == torch.device('cpu') and v359.shape == (128, 64, 1, 1) and v359.stride() == (64, 1, 1, 1) and v359.requires_grad is True and v359.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v359))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None"
        v360 = v358['bias']
        if not (v360 is None):
            return _rt.Fail(_at, _rt.describe(v360))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'"
        v361 = v350.padding_mode
        if not (type(v361) is str and v361 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v361))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride (expected builtins.tuple)"
        v362 = v350.stride
        if not (type(v362) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v362))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride) == 2"
        if not (len(v362) == 2):
            return _rt.Fail(_at, _rt.describe(v362))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2"
        v363 = v362[0]
        if not (type(v363) is int and v363 == 2):
            return _rt.Fail(_at, _rt.describe(v363))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2"
        v364 = v362[1]
        if not (type(v364) is int and v364 == 2):
            return _rt.Fail(_at, _rt.describe(v364))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding (expected builtins.tuple)"
        v365 = v350.padding
        if not (type(v365) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v365))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding) == 2"
        if not (len(v365) == 2):
            return _rt.Fail(_at, _rt.describe(v365))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0"
        v366 = v365[0]
        if not (type(v366) is int and v366 == 0):
            return _rt.Fail(_at, _rt.describe(v366))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0"
        v367 = v365[1]
        if not (type(v367) is int and v367 == 0):
            return _rt.Fail(_at, _rt.describe(v367))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation (expected builtins.tuple)"
        v368 = v350.dilation
        if not (type(v368) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v368))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation) == 2"
        if not (len(v368) == 2):
            return _rt.Fail(_at, _rt.describe(v368))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1"
        v369 = v368[0]
        if not (type(v369) is int and v369 == 1):
            return _rt.Fail(_at, _rt.describe(v369))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1"
        v370 = v368[1]
        if not (type(v370) is int and v370 == 1):
            return _rt.Fail(_at, _rt.describe(v370))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0'].groups == 1"
        v371 = v350.groups
        if not (type(v371) is int and v371 == 1):
            return _rt.Fail(_at, _rt.describe(v371))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v372 = v349['1']
        if not (type(v372) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v372))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0"
        v373 = v372._forward_hooks
        if not (len(v373) == 0):
            return _rt.Fail(_at, _rt.describe(v373))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0"
        v374 = v372._forward_pre_hooks
        if not (len(v374) == 0):
            return _rt.Fail(_at, _rt.describe(v374))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0"
        v375 = v372._backward_hooks
        if not (len(v375) == 0):
            return _rt.Fail(_at, _rt.describe(v375))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0"
        v376 = v372._backward_pre_hooks
        if not (len(v376) == 0):
            return _rt.Fail(_at, _rt.describe(v376))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].training == False"
        v377 = v372.training
        if not (type(v377) is bool and v377 == False):
            return _rt.Fail(_at, _rt.describe(v377))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v378 = v372._check_input_dim
        v379 = v378.__func__
        if not (v379 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v379))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1"
        v380 = v372.momentum
        if not (type(v380) is float and v380 == 0.1):
            return _rt.Fail(_at, _rt.describe(v380))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v381 = v372._buffers
        v382 = v381['running_mean']
        if not (type(v382) is Tensor_7 and v382.dtype is torch.float32 and v382.device == torch.device('cpu') and v382.shape == (128,) and v382.stride() == (1,) and v382.requires_grad is False and v382.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v382))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v383 = v381['running_var']
        if not (type(v383) is Tensor_7 and v383.dtype is torch.float32 and v383.device == torch.device('cpu') and v383.shape == (128,) and v383.stride() == (1,) and v383.requires_grad is False and v383.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v383))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v384 = v372._parameters
        v385 = v384['weight']
        if not (type(v385) is Parameter_16 and v385.dtype is torch.float32 and v385.device == torch.device('cpu') and v385.shape == (128,) and v385.stride() == (1,) and v385.requires_grad is True and v385.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v385))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v386 = v384['bias']
        if not (type(v386) is Parameter_16 and v386.dtype is torch.float32 and v386.device == torch.device('cpu') and v386.shape == (128,) and v386.stride() == (1,) and v386.requires_grad is True and v386.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v386))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05"
        v387 = v372.eps
        if not (type(v387) is float and v387 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v387))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1'] (expected torchvision.models.resnet.BasicBlock)"
        v388 = v254['1']
        if not (type(v388) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v388))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._forward_hooks) == 0"
        v389 = v388._forward_hooks
        if not (len(v389) == 0):
            return _rt.Fail(_at, _rt.describe(v389))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._forward_pre_hooks) == 0"
        v390 = v388._forward_pre_hooks
        if not (len(v390) == 0):
            return _rt.Fail(_at, _rt.describe(v390))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._backward_hooks) == 0"
        v391 = v388._backward_hooks
        if not (len(v391) == 0):
            return _rt.Fail(_at, _rt.describe(v391))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._backward_pre_hooks) == 0"
        v392 = v388._backward_pre_hooks
        if not (len(v392) == 0):
            return _rt.Fail(_at, _rt.describe(v392))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v393 = v388._modules
        v394 = v393['conv1']
        if not (type(v394) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v394))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._forward_hooks) == 0"
        v395 = v394._forward_hooks
        if not (len(v395) == 0):
            return _rt.Fail(_at, _rt.describe(v395))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._forward_pre_hooks) == 0"
        v396 = v394._forward_pre_hooks
        if not (len(v396) == 0):
            return _rt.Fail(_at, _rt.describe(v396))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._backward_hooks) == 0"
        v397 = v394._backward_hooks
        if not (len(v397) == 0):
            return _rt.Fail(_at, _rt.describe(v397))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1']._backward_pre_hooks) == 0"
        v398 = v394._backward_pre_hooks
        if not (len(v398) == 0):
            return _rt.Fail(_at, _rt.describe(v398))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].training == False"
        v399 = v394.training
        if not (type(v399) is bool and v399 == False):
            return _rt.Fail(_at, _rt.describe(v399))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v400 = v394._conv_forward
        v401 = v400.__func__
        if not (v401 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v401))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128, 128, 3, 3), stride=(1152, 9, 3, 1), device=cpu, requires_grad=True))"
        v402 = v394._parameters
        v403 = v402['weight']
        if not (type(v403) is Parameter_16 and v403.dtype is torch.float32 and v403.device == torch.device('cpu') and v403.shape == (128, 128, 3, 3) and v403.stride() == (1152, 9, 3, 1) and v403.requires_grad is True and v403.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v403))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1']._parameters['bias'] is None"
        v404 = v402['bias']
        if not (v404 is None):
            return _rt.Fail(_at, _rt.describe(v404))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding_mode == 'zeros'"
        v405 = v394.padding_mode
        if not (type(v405) is str and v405 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v405))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride (expected builtins.tuple)"
        v406 = v394.stride
        if not (type(v406) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v406))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].stride) == 2"
        if not (len(v406) == 2):
            return _rt.Fail(_at, _rt.describe(v406))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride[0] == 1"
        v407 = v406[0]
        if not (type(v407) is int and v407 == 1):
            return _rt.Fail(_at, _rt.describe(v407))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].stride[1] == 1"
        v408 = v406[1]
        if not (type(v408) is int and v408 == 1):
            return _rt.Fail(_at, _rt.describe(v408))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding (expected builtins.tuple)"
        v409 = v394.padding
        if not (type(v409) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v409))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].padding) == 2"
        if not (len(v409) == 2):
            return _rt.Fail(_at, _rt.describe(v409))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding[0] == 1"
        v410 = v409[0]
        if not (type(v410) is int and v410 == 1):
            return _rt.Fail(_at, _rt.describe(v410))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].padding[1] == 1"
        v411 = v409[1]
        if not (type(v411) is int and v411 == 1):
            return _rt.Fail(_at, _rt.describe(v411))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation (expected builtins.tuple)"
        v412 = v394.dilation
        if not (type(v412) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v412))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation) == 2"
        if not (len(v412) == 2):
            return _rt.Fail(_at, _rt.describe(v412))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation[0] == 1"
        v413 = v412[0]
        if not (type(v413) is int and v413 == 1):
            return _rt.Fail(_at, _rt.describe(v413))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].dilation[1] == 1"
        v414 = v412[1]
        if not (type(v414) is int and v414 == 1):
            return _rt.Fail(_at, _rt.describe(v414))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv1'].groups == 1"
        v415 = v394.groups
        if not (type(v415) is int and v415 == 1):
            return _rt.Fail(_at, _rt.describe(v415))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v416 = v393['bn1']
        if not (type(v416) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v416))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._forward_hooks) == 0"
        v417 = v416._forward_hooks
        if not (len(v417) == 0):
            return _rt.Fail(_at, _rt.describe(v417))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._forward_pre_hooks) == 0"
        v418 = v416._forward_pre_hooks
        if not (len(v418) == 0):
            return _rt.Fail(_at, _rt.describe(v418))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._backward_hooks) == 0"
        v419 = v416._backward_hooks
        if not (len(v419) == 0):
            return _rt.Fail(_at, _rt.describe(v419))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn1']._backward_pre_hooks) == 0"
        v420 = v416._backward_pre_hooks
        if not (len(v420) == 0):
            return _rt.Fail(_at, _rt.describe(v420))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].training == False"
        v421 = v416.training
        if not (type(v421) is bool and v421 == False):
            return _rt.Fail(_at, _rt.describe(v421))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v422 = v416._check_input_dim
        v423 = v422.__func__
        if not (v423 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v423))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].momentum == 0.1"
        v424 = v416.momentum
        if not (type(v424) is float and v424 == 0.1):
            return _rt.Fail(_at, _rt.describe(v424))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v425 = v416._buffers
        v426 = v425['running_mean']
        if not (type(v426) is Tensor_7 and v426.dtype is torch.float32 and v426.device == torch.device('cpu') and v426.shape == (128,) and v426.stride() == (1,) and v426.requires_grad is False and v426.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v426))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v427 = v425['running_var']
        if not (type(v427) is Tensor_7 and v427.dtype is torch.float32 and v427.device == torch.device('cpu') and v427.shape == (128,) and v427.stride() == (1,) and v427.requires_grad is False and v427.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v427))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v428 = v416._parameters
        v429 = v428['weight']
        if not (type(v429) is Parameter_16 and v429.dtype is torch.float32 and v429.device == torch.device('cpu') and v429.shape == (128,) and v429.stride() == (1,) and v429.requires_grad is True and v429.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v429))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v430 = v428['bias']
        if not (type(v430) is Parameter_16 and v430.dtype is torch.float32 and v430.device == torch.device('cpu') and v430.shape == (128,) and v430.stride() == (1,) and v430.requires_grad is True and v430.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v430))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn1'].eps == 1e-05"
        v431 = v416.eps
        if not (type(v431) is float and v431 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v431))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v432 = v393['relu']
        if not (type(v432) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v432))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._forward_hooks) == 0"
        v433 = v432._forward_hooks
        if not (len(v433) == 0):
            return _rt.Fail(_at, _rt.describe(v433))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._forward_pre_hooks) == 0"
        v434 = v432._forward_pre_hooks
        if not (len(v434) == 0):
            return _rt.Fail(_at, _rt.describe(v434))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._backward_hooks) == 0"
        v435 = v432._backward_hooks
        if not (len(v435) == 0):
            return _rt.Fail(_at, _rt.describe(v435))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['relu']._backward_pre_hooks) == 0"
        v436 = v432._backward_pre_hooks
        if not (len(v436) == 0):
            return _rt.Fail(_at, _rt.describe(v436))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['relu'].training == False"
        v437 = v432.training
        if not (type(v437) is bool and v437 == False):
            return _rt.Fail(_at, _rt.describe(v437))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v438 = v393['conv2']
        if not (type(v438) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v438))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._forward_hooks) == 0"
        v439 = v438._forward_hooks
        if not (len(v439) == 0):
            return _rt.Fail(_at, _rt.describe(v439))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._forward_pre_hooks) == 0"
        v440 = v438._forward_pre_hooks
        if not (len(v440) == 0):
            return _rt.Fail(_at, _rt.describe(v440))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._backward_hooks) == 0"
        v441 = v438._backward_hooks
        if not (len(v441) == 0):
            return _rt.Fail(_at, _rt.describe(v441))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2']._backward_pre_hooks) == 0"
        v442 = v438._backward_pre_hooks
        if not (len(v442) == 0):
            return _rt.Fail(_at, _rt.describe(v442))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].training == False"
        v443 = v438.training
        if not (type(v443) is bool and v443 == False):
            return _rt.Fail(_at, _rt.describe(v443))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v444 = v438._conv_forward
        v445 = v444.__func__
        if not (v445 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v445))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128, 128, 3, 3), stride=(1152, 9, 3, 1), device=cpu, requires_grad=True))"
        v446 = v438._parameters
        v447 = v446['weight']
        if not (type(v447) is Parameter_16 and v447.dtype is torch.float32 and v447.device == torch.device('cpu') and v447.shape == (128, 128, 3, 3) and v447.stride() == (1152, 9, 3, 1) and v447.requires_grad is True and v447.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v447))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2']._parameters['bias'] is None"
        v448 = v446['bias']
        if not (v448 is None):
            return _rt.Fail(_at, _rt.describe(v448))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding_mode == 'zeros'"
        v449 = v438.padding_mode
        if not (type(v449) is str and v449 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v449))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride (expected builtins.tuple)"
        v450 = v438.stride
        if not (type(v450) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v450))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].stride) == 2"
        if not (len(v450) == 2):
            return _rt.Fail(_at, _rt.describe(v450))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride[0] == 1"
        v451 = v450[0]
        if not (type(v451) is int and v451 == 1):
            return _rt.Fail(_at, _rt.describe(v451))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].stride[1] == 1"
        v452 = v450[1]
        if not (type(v452) is int and v452 == 1):
            return _rt.Fail(_at, _rt.describe(v452))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding (expected builtins.tuple)"
        v453 = v438.padding
        if not (type(v453) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v453))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].padding) == 2"
        if not (len(v453) == 2):
            return _rt.Fail(_at, _rt.describe(v453))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding[0] == 1"
        v454 = v453[0]
        if not (type(v454) is int and v454 == 1):
            return _rt.Fail(_at, _rt.describe(v454))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].padding[1] == 1"
        v455 = v453[1]
        if not (type(v455) is int and v455 == 1):
            return _rt.Fail(_at, _rt.describe(v455))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation (expected builtins.tuple)"
        v456 = v438.dilation
        if not (type(v456) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v456))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation) == 2"
        if not (len(v456) == 2):
            return _rt.Fail(_at, _rt.describe(v456))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation[0] == 1"
        v457 = v456[0]
        if not (type(v457) is int and v457 == 1):
            return _rt.Fail(_at, _rt.describe(v457))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].dilation[1] == 1"
        v458 = v456[1]
        if not (type(v458) is int and v458 == 1):
            return _rt.Fail(_at, _rt.describe(v458))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['conv2'].groups == 1"
        v459 = v438.groups
        if not (type(v459) is int and v459 == 1):
            return _rt.Fail(_at, _rt.describe(v459))
        _at = "TYPE_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v460 = v393['bn2']
        if not (type(v460) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v460))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._forward_hooks) == 0"
        v461 = v460._forward_hooks
        if not (len(v461) == 0):
            return _rt.Fail(_at, _rt.describe(v461))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._forward_pre_hooks) == 0"
        v462 = v460._forward_pre_hooks
        if not (len(v462) == 0):
            return _rt.Fail(_at, _rt.describe(v462))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._backward_hooks) == 0"
        v463 = v460._backward_hooks
        if not (len(v463) == 0):
            return _rt.Fail(_at, _rt.describe(v463))
        _at = "LENGTH_CHECK len(L['model']._modules['layer2']._modules['1']._modules['bn2']._backward_pre_hooks) == 0"
        v464 = v460._backward_pre_hooks
        if not (len(v464) == 0):
            return _rt.Fail(_at, _rt.describe(v464))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].training == False"
        v465 = v460.training
        if not (type(v465) is bool and v465 == False):
            return _rt.Fail(_at, _rt.describe(v465))
        _at = "ID_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v466 = v460._check_input_dim
        v467 = v466.__func__
        if not (v467 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v467))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].momentum == 0.1"
        v468 = v460.momentum
        if not (type(v468) is float and v468 == 0.1):
            return _rt.Fail(_at, _rt.describe(v468))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v469 = v460._buffers
        v470 = v469['running_mean']
        if not (type(v470) is Tensor_7 and v470.dtype is torch.float32 and v470.device == torch.device('cpu') and v470.shape == (128,) and v470.stride() == (1,) and v470.requires_grad is False and v470.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v470))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=False))"
        v471 = v469['running_var']
        if not (type(v471) is Tensor_7 and v471.dtype is torch.float32 and v471.device == torch.device('cpu') and v471.shape == (128,) and v471.stride() == (1,) and v471.requires_grad is False and v471.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v471))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v472 = v460._parameters
        v473 = v472['weight']
        if not (type(v473) is Parameter_16 and v473.dtype is torch.float32 and v473.device == torch.device('cpu') and v473.shape == (128,) and v473.stride() == (1,) and v473.requires_grad is True and v473.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v473))
        _at = "TENSOR_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(128,), stride=(1,), device=cpu, requires_grad=True))"
        v474 = v472['bias']
        if not (type(v474) is Parameter_16 and v474.dtype is torch.float32 and v474.device == torch.device('cpu') and v474.shape == (128,) and v474.stride() == (1,) and v474.requires_grad is True and v474.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v474))
        _at = "EQUALS_MATCH L['model']._modules['layer2']._modules['1']._modules['bn2'].eps == 1e-05"
        v475 = v460.eps
        if not (type(v475) is float and v475 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v475))
        _at = "NONE_MATCH L['model']._modules['layer2']._modules['1'].downsample is None"
        v476 = v388.downsample
        if not (v476 is None):
            return _rt.Fail(_at, _rt.describe(v476))
        _at = "TYPE_MATCH L['model']._modules['layer3'] (expected torch.nn.modules.container.Sequential)"
        v477 = v6['layer3']
        if not (type(v477) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v477))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._forward_hooks) == 0"
        v478 = v477._forward_hooks
        if not (len(v478) == 0):
            return _rt.Fail(_at, _rt.describe(v478))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._forward_pre_hooks) == 0"
        v479 = v477._forward_pre_hooks
        if not (len(v479) == 0):
            return _rt.Fail(_at, _rt.describe(v479))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._backward_hooks) == 0"
        v480 = v477._backward_hooks
        if not (len(v480) == 0):
            return _rt.Fail(_at, _rt.describe(v480))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._backward_pre_hooks) == 0"
        v481 = v477._backward_pre_hooks
        if not (len(v481) == 0):
            return _rt.Fail(_at, _rt.describe(v481))
        _at = "EQUALS_MATCH L['model']._modules['layer3'].training == False"
        v482 = v477.training
        if not (type(v482) is bool and v482 == False):
            return _rt.Fail(_at, _rt.describe(v482))
        _at = "DICT_KEYS L['model']._modules['layer3']._modules == ['0', '1']"
        v483 = v477._modules
        if not (list(v483.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v483))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0'] (expected torchvision.models.resnet.BasicBlock)"
        v484 = v483['0']
        if not (type(v484) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v484))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._forward_hooks) == 0"
        v485 = v484._forward_hooks
        if not (len(v485) == 0):
            return _rt.Fail(_at, _rt.describe(v485))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._forward_pre_hooks) == 0"
        v486 = v484._forward_pre_hooks
        if not (len(v486) == 0):
            return _rt.Fail(_at, _rt.describe(v486))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._backward_hooks) == 0"
        v487 = v484._backward_hooks
        if not (len(v487) == 0):
            return _rt.Fail(_at, _rt.describe(v487))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._backward_pre_hooks) == 0"
        v488 = v484._backward_pre_hooks
        if not (len(v488) == 0):
            return _rt.Fail(_at, _rt.describe(v488))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v489 = v484._modules
        v490 = v489['conv1']
        if not (type(v490) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v490))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._forward_hooks) == 0"
        v491 = v490._forward_hooks
        if not (len(v491) == 0):
            return _rt.Fail(_at, _rt.describe(v491))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._forward_pre_hooks) == 0"
        v492 = v490._forward_pre_hooks
        if not (len(v492) == 0):
            return _rt.Fail(_at, _rt.describe(v492))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._backward_hooks) == 0"
        v493 = v490._backward_hooks
        if not (len(v493) == 0):
            return _rt.Fail(_at, _rt.describe(v493))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1']._backward_pre_hooks) == 0"
        v494 = v490._backward_pre_hooks
        if not (len(v494) == 0):
            return _rt.Fail(_at, _rt.describe(v494))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].training == False"
        v495 = v490.training
        if not (type(v495) is bool and v495 == False):
            return _rt.Fail(_at, _rt.describe(v495))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v496 = v490._conv_forward
        v497 = v496.__func__
        if not (v497 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v497))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256, 128, 3, 3), stride=(1152, 9, 3, 1), device=cpu, requires_grad=True))"
        v498 = v490._parameters
        v499 = v498['weight']
        if not (type(v499) is Parameter_16 and v499.dtype is torch.float32 and v499.device == torch.device('cpu') and v499.shape == (256, 128, 3, 3) and v499.stride() == (1152, 9, 3, 1) and v499.requires_grad is True and v499.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v499))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1']._parameters['bias'] is None"
        v500 = v498['bias']
        if not (v500 is None):
            return _rt.Fail(_at, _rt.describe(v500))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding_mode == 'zeros'"
        v501 = v490.padding_mode
        if not (type(v501) is str and v501 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v501))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride (expected builtins.tuple)"
        v502 = v490.stride
        if not (type(v502) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v502))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].stride) == 2"
        if not (len(v502) == 2):
            return _rt.Fail(_at, _rt.describe(v502))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride[0] == 2"
        v503 = v502[0]
        if not (type(v503) is int and v503 == 2):
            return _rt.Fail(_at, _rt.describe(v503))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].stride[1] == 2"
        v504 = v502[1]
        if not (type(v504) is int and v504 == 2):
            return _rt.Fail(_at, _rt.describe(v504))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding (expected builtins.tuple)"
        v505 = v490.padding
        if not (type(v505) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v505))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].padding) == 2"
        if not (len(v505) == 2):
            return _rt.Fail(_at, _rt.describe(v505))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding[0] == 1"
        v506 = v505[0]
        if not (type(v506) is int and v506 == 1):
            return _rt.Fail(_at, _rt.describe(v506))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].padding[1] == 1"
        v507 = v505[1]
        if not (type(v507) is int and v507 == 1):
            return _rt.Fail(_at, _rt.describe(v507))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation (expected builtins.tuple)"
        v508 = v490.dilation
        if not (type(v508) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v508))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation) == 2"
        if not (len(v508) == 2):
            return _rt.Fail(_at, _rt.describe(v508))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation[0] == 1"
        v509 = v508[0]
        if not (type(v509) is int and v509 == 1):
            return _rt.Fail(_at, _rt.describe(v509))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].dilation[1] == 1"
        v510 = v508[1]
        if not (type(v510) is int and v510 == 1):
            return _rt.Fail(_at, _rt.describe(v510))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv1'].groups == 1"
        v511 = v490.groups
        if not (type(v511) is int and v511 == 1):
            return _rt.Fail(_at, _rt.describe(v511))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v512 = v489['bn1']
        if not (type(v512) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v512))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._forward_hooks) == 0"
        v513 = v512._forward_hooks
        if not (len(v513) == 0):
            return _rt.Fail(_at, _rt.describe(v513))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._forward_pre_hooks) == 0"
        v514 = v512._forward_pre_hooks
        if not (len(v514) == 0):
            return _rt.Fail(_at, _rt.describe(v514))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._backward_hooks) == 0"
        v515 = v512._backward_hooks
        if not (len(v515) == 0):
            return _rt.Fail(_at, _rt.describe(v515))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn1']._backward_pre_hooks) == 0"
        v516 = v512._backward_pre_hooks
        if not (len(v516) == 0):
            return _rt.Fail(_at, _rt.describe(v516))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].training == False"
        v517 = v512.training
        if not (type(v517) is bool and v517 == False):
            return _rt.Fail(_at, _rt.describe(v517))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v518 = v512._check_input_dim
        v519 = v518.__func__
        if not (v519 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v519))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].momentum == 0.1"
        v520 = v512.momentum
        if not (type(v520) is float and v520 == 0.1):
            return _rt.Fail(_at, _rt.describe(v520))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v521 = v512._buffers
        v522 = v521['running_mean']
        if not (type(v522) is Tensor_7 and v522.dtype is torch.float32 and v522.device == torch.device('cpu') and v522.shape == (256,) and v522.stride() == (1,) and v522.requires_grad is False and v522.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v522))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v523 = v521['running_var']
        if not (type(v523) is Tensor_7 and v523.dtype is torch.float32 and v523.device == torch.device('cpu') and v523.shape == (256,) and v523.stride() == (1,) and v523.requires_grad is False and v523.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v523))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v524 = v512._parameters
        v525 = v524['weight']
        if not (type(v525) is Parameter_16 and v525.dtype is torch.float32 and v525.device == torch.device('cpu') and v525.shape == (256,) and v525.stride() == (1,) and v525.requires_grad is True and v525.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v525))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v526 = v524['bias']
        if not (type(v526) is Parameter_16 and v526.dtype is torch.float32 and v526.device == torch.device('cpu') and v526.shape == (256,) and v526.stride() == (1,) and v526.requires_grad is True and v526.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v526))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn1'].eps == 1e-05"
        v527 = v512.eps
        if not (type(v527) is float and v527 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v527))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v528 = v489['relu']
        if not (type(v528) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v528))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._forward_hooks) == 0"
        v529 = v528._forward_hooks
        if not (len(v529) == 0):
            return _rt.Fail(_at, _rt.describe(v529))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._forward_pre_hooks) == 0"
        v530 = v528._forward_pre_hooks
        if not (len(v530) == 0):
            return _rt.Fail(_at, _rt.describe(v530))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._backward_hooks) == 0"
        v531 = v528._backward_hooks
        if not (len(v531) == 0):
            return _rt.Fail(_at, _rt.describe(v531))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['relu']._backward_pre_hooks) == 0"
        v532 = v528._backward_pre_hooks
        if not (len(v532) == 0):
            return _rt.Fail(_at, _rt.describe(v532))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['relu'].training == False"
        v533 = v528.training
        if not (type(v533) is bool and v533 == False):
            return _rt.Fail(_at, _rt.describe(v533))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v534 = v489['conv2']
        if not (type(v534) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v534))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._forward_hooks) == 0"
        v535 = v534._forward_hooks
        if not (len(v535) == 0):
            return _rt.Fail(_at, _rt.describe(v535))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._forward_pre_hooks) == 0"
        v536 = v534._forward_pre_hooks
        if not (len(v536) == 0):
            return _rt.Fail(_at, _rt.describe(v536))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._backward_hooks) == 0"
        v537 = v534._backward_hooks
        if not (len(v537) == 0):
            return _rt.Fail(_at, _rt.describe(v537))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2']._backward_pre_hooks) == 0"
        v538 = v534._backward_pre_hooks
        if not (len(v538) == 0):
            return _rt.Fail(_at, _rt.describe(v538))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].training == False"
        v539 = v534.training
        if not (type(v539) is bool and v539 == False):
            return _rt.Fail(_at, _rt.describe(v539))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v540 = v534._conv_forward
        v541 = v540.__func__
        if not (v541 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v541))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256, 256, 3, 3), stride=(2304, 9, 3, 1), device=cpu, requires_grad=True))"
        v542 = v534._parameters
        v543 = v542['weight']
        if not (type(v543) is Parameter_16 and v543.dtype is torch.float32 and v543.device == torch.device('cpu') and v543.shape == (256, 256, 3, 3) and v543.stride() == (2304, 9, 3, 1) and v543.requires_grad is True and v543.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v543))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2']._parameters['bias'] is None"
        v544 = v542['bias']
        if not (v544 is None):
            return _rt.Fail(_at, _rt.describe(v544))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding_mode == 'zeros'"
        v545 = v534.padding_mode
        if not (type(v545) is str and v545 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v545))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride (expected builtins.tuple)"
        v546 = v534.stride
        if not (type(v546) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v546))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].stride) == 2"
        if not (len(v546) == 2):
            return _rt.Fail(_at, _rt.describe(v546))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride[0] == 1"
        v547 = v546[0]
        if not (type(v547) is int and v547 == 1):
            return _rt.Fail(_at, _rt.describe(v547))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].stride[1] == 1"
        v548 = v546[1]
        if not (type(v548) is int and v548 == 1):
            return _rt.Fail(_at, _rt.describe(v548))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding (expected builtins.tuple)"
        v549 = v534.padding
        if not (type(v549) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v549))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].padding) == 2"
        if not (len(v549) == 2):
            return _rt.Fail(_at, _rt.describe(v549))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding[0] == 1"
        v550 = v549[0]
        if not (type(v550) is int and v550 == 1):
            return _rt.Fail(_at, _rt.describe(v550))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].padding[1] == 1"
        v551 = v549[1]
        if not (type(v551) is int and v551 == 1):
            return _rt.Fail(_at, _rt.describe(v551))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation (expected builtins.tuple)"
        v552 = v534.dilation
        if not (type(v552) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v552))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation) == 2"
        if not (len(v552) == 2):
            return _rt.Fail(_at, _rt.describe(v552))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation[0] == 1"
        v553 = v552[0]
        if not (type(v553) is int and v553 == 1):
            return _rt.Fail(_at, _rt.describe(v553))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].dilation[1] == 1"
        v554 = v552[1]
        if not (type(v554) is int and v554 == 1):
            return _rt.Fail(_at, _rt.describe(v554))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['conv2'].groups == 1"
        v555 = v534.groups
        if not (type(v555) is int and v555 == 1):
            return _rt.Fail(_at, _rt.describe(v555))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v556 = v489['bn2']
        if not (type(v556) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v556))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._forward_hooks) == 0"
        v557 = v556._forward_hooks
        if not (len(v557) == 0):
            return _rt.Fail(_at, _rt.describe(v557))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._forward_pre_hooks) == 0"
        v558 = v556._forward_pre_hooks
        if not (len(v558) == 0):
            return _rt.Fail(_at, _rt.describe(v558))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._backward_hooks) == 0"
        v559 = v556._backward_hooks
        if not (len(v559) == 0):
            return _rt.Fail(_at, _rt.describe(v559))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['bn2']._backward_pre_hooks) == 0"
        v560 = v556._backward_pre_hooks
        if not (len(v560) == 0):
            return _rt.Fail(_at, _rt.describe(v560))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].training == False"
        v561 = v556.training
        if not (type(v561) is bool and v561 == False):
            return _rt.Fail(_at, _rt.describe(v561))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v562 = v556._check_input_dim
        v563 = v562.__func__
        if not (v563 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v563))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].momentum == 0.1"
        v564 = v556.momentum
        if not (type(v564) is float and v564 == 0.1):
            return _rt.Fail(_at, _rt.describe(v564))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v565 = v556._buffers
        v566 = v565['running_mean']
        if not (type(v566) is Tensor_7 and v566.dtype is torch.float32 and v566.device == torch.device('cpu') and v566.shape == (256,) and v566.stride() == (1,) and v566.requires_grad is False and v566.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v566))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v567 = v565['running_var']
        if not (type(v567) is Tensor_7 and v567.dtype is torch.float32 and v567.device == torch.device('cpu') and v567.shape == (256,) and v567.stride() == (1,) and v567.requires_grad is False and v567.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v567))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v568 = v556._parameters
        v569 = v568['weight']
        if not (type(v569) is Parameter_16 and v569.dtype is torch.float32 and v569.device == torch.device('cpu') and v569.shape == (256,) and v569.stride() == (1,) and v569.requires_grad is True and v569.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v569))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v570 = v568['bias']
        if not (type(v570) is Parameter_16 and v570.dtype is torch.float32 and v570.device == torch.device('cpu') and v570.shape == (256,) and v570.stride() == (1,) and v570.requires_grad is True and v570.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v570))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['bn2'].eps == 1e-05"
        v571 = v556.eps
        if not (type(v571) is float and v571 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v571))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample'] (expected torch.nn.modules.container.Sequential)"
        v572 = v489['downsample']
        if not (type(v572) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v572))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._forward_hooks) == 0"
        v573 = v572._forward_hooks
        if not (len(v573) == 0):
            return _rt.Fail(_at, _rt.describe(v573))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._forward_pre_hooks) == 0"
        v574 = v572._forward_pre_hooks
        if not (len(v574) == 0):
            return _rt.Fail(_at, _rt.describe(v574))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._backward_hooks) == 0"
        v575 = v572._backward_hooks
        if not (len(v575) == 0):
            return _rt.Fail(_at, _rt.describe(v575))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._backward_pre_hooks) == 0"
        v576 = v572._backward_pre_hooks
        if not (len(v576) == 0):
            return _rt.Fail(_at, _rt.describe(v576))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample'].training == False"
        v577 = v572.training
        if not (type(v577) is bool and v577 == False):
            return _rt.Fail(_at, _rt.describe(v577))
        _at = "DICT_KEYS L['model']._modules['layer3']._modules['0']._modules['downsample']._modules == ['0', '1']"
        v578 = v572._modules
        if not (list(v578.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v578))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'] (expected torch.nn.modules.conv.Conv2d)"
        v579 = v578['0']
        if not (type(v579) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v579))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0"
        v580 = v579._forward_hooks
        if not (len(v580) == 0):
            return _rt.Fail(_at, _rt.describe(v580))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0"
        v581 = v579._forward_pre_hooks
        if not (len(v581) == 0):
            return _rt.Fail(_at, _rt.describe(v581))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0"
        v582 = v579._backward_hooks
        if not (len(v582) == 0):
            return _rt.Fail(_at, _rt.describe(v582))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0"
        v583 = v579._backward_pre_hooks
        if not (len(v583) == 0):
            return _rt.Fail(_at, _rt.describe(v583))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].training == False"
        v584 = v579.training
        if not (type(v584) is bool and v584 == False):
            return _rt.Fail(_at, _rt.describe(v584))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v585 = v579._conv_forward
        v586 = v585.__func__
        if not (v586 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v586))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256, 128, 1, 1), stride=(128, 1, 1, 1), device=cpu, requires_grad=True))"
        v587 = v579._parameters
        v588 = v587['weight']
        if not (type(v588) is Parameter_16 and v588.dtype is torch.float32 and v588.device == torch.device('cpu') and v588.shape == (256, 128, 1, 1) and v588.stride() == (128, 1, 1, 1) and v588.requires_grad is True and v588.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v588))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None"
        v589 = v587['bias']
        if not (v589 is None):
            return _rt.Fail(_at, _rt.describe(v589))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'"
        v590 = v579.padding_mode
        if not (type(v590) is str and v590 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v590))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride (expected builtins.tuple)"
        v591 = v579.stride
        if not (type(v591) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v591))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride) == 2"
        if not (len(v591) == 2):
            return _rt.Fail(_at, _rt.describe(v591))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2"
        v592 = v591[0]
        if not (type(v592) is int and v592 == 2):
            return _rt.Fail(_at, _rt.describe(v592))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2"
        v593 = v591[1]
        if not (type(v593) is int and v593 == 2):
            return _rt.Fail(_at, _rt.describe(v593))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding (expected builtins.tuple)"
        v594 = v579.padding
        if not (type(v594) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v594))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding) == 2"
        if not (len(v594) == 2):
            return _rt.Fail(_at, _rt.describe(v594))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0"
        v595 = v594[0]
        if not (type(v595) is int and v595 == 0):
            return _rt.Fail(_at, _rt.describe(v595))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0"
        v596 = v594[1]
        if not (type(v596) is int and v596 == 0):
            return _rt.Fail(_at, _rt.describe(v596))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation (expected builtins.tuple)"
        v597 = v579.dilation
        if not (type(v597) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v597))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation) == 2"
        if not (len(v597) == 2):
            return _rt.Fail(_at, _rt.describe(v597))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1"
        v598 = v597[0]
        if not (type(v598) is int and v598 == 1):
            return _rt.Fail(_at, _rt.describe(v598))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1"
        v599 = v597[1]
        if not (type(v599) is int and v599 == 1):
            return _rt.Fail(_at, _rt.describe(v599))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0'].groups == 1"
        v600 = v579.groups
        if not (type(v600) is int and v600 == 1):
            return _rt.Fail(_at, _rt.describe(v600))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v601 = v578['1']
        if not (type(v601) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v601))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0"
        v602 = v601._forward_hooks
        if not (len(v602) == 0):
            return _rt.Fail(_at, _rt.describe(v602))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0"
        v603 = v601._forward_pre_hooks
        if not (len(v603) == 0):
            return _rt.Fail(_at, _rt.describe(v603))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0"
        v604 = v601._backward_hooks
        if not (len(v604) == 0):
            return _rt.Fail(_at, _rt.describe(v604))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0"
        v605 = v601._backward_pre_hooks
        if not (len(v605) == 0):
            return _rt.Fail(_at, _rt.describe(v605))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].training == False"
        v606 = v601.training
        if not (type(v606) is bool and v606 == False):
            return _rt.Fail(_at, _rt.describe(v606))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v607 = v601._check_input_dim
        v608 = v607.__func__
        if not (v608 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v608))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1"
        v609 = v601.momentum
        if not (type(v609) is float and v609 == 0.1):
            return _rt.Fail(_at, _rt.describe(v609))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v610 = v601._buffers
        v611 = v610['running_mean']
        if not (type(v611) is Tensor_7 and v611.dtype is torch.float32 and v611.device == torch.device('cpu') and v611.shape == (256,) and v611.stride() == (1,) and v611.requires_grad is False and v611.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v611))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v612 = v610['running_var']
        if not (type(v612) is Tensor_7 and v612.dtype is torch.float32 and v612.device == torch.device('cpu') and v612.shape == (256,) and v612.stride() == (1,) and v612.requires_grad is False and v612.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v612))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v613 = v601._parameters
        v614 = v613['weight']
        if not (type(v614) is Parameter_16 and v614.dtype is torch.float32 and v614.device == torch.device('cpu') and v614.shape == (256,) and v614.stride() == (1,) and v614.requires_grad is True and v614.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v614))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v615 = v613['bias']
        if not (type(v615) is Parameter_16 and v615.dtype is torch.float32 and v615.device == torch.device('cpu') and v615.shape == (256,) and v615.stride() == (1,) and v615.requires_grad is True and v615.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v615))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05"
        v616 = v601.eps
        if not (type(v616) is float and v616 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v616))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1'] (expected torchvision.models.resnet.BasicBlock)"
        v617 = v483['1']
        if not (type(v617) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v617))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._forward_hooks) == 0"
        v618 = v617._forward_hooks
        if not (len(v618) == 0):
            return _rt.Fail(_at, _rt.describe(v618))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._forward_pre_hooks) == 0"
        v619 = v617._forward_pre_hooks
        if not (len(v619) == 0):
            return _rt.Fail(_at, _rt.describe(v619))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._backward_hooks) == 0"
        v620 = v617._backward_hooks
        if not (len(v620) == 0):
            return _rt.Fail(_at, _rt.describe(v620))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._backward_pre_hooks) == 0"
        v621 = v617._backward_pre_hooks
        if not (len(v621) == 0):
            return _rt.Fail(_at, _rt.describe(v621))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v622 = v617._modules
        v623 = v622['conv1']
        if not (type(v623) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v623))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._forward_hooks) == 0"
        v624 = v623._forward_hooks
        if not (len(v624) == 0):
            return _rt.Fail(_at, _rt.describe(v624))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._forward_pre_hooks) == 0"
        v625 = v623._forward_pre_hooks
        if not (len(v625) == 0):
            return _rt.Fail(_at, _rt.describe(v625))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._backward_hooks) == 0"
        v626 = v623._backward_hooks
        if not (len(v626) == 0):
            return _rt.Fail(_at, _rt.describe(v626))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1']._backward_pre_hooks) == 0"
        v627 = v623._backward_pre_hooks
        if not (len(v627) == 0):
            return _rt.Fail(_at, _rt.describe(v627))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].training == False"
        v628 = v623.training
        if not (type(v628) is bool and v628 == False):
            return _rt.Fail(_at, _rt.describe(v628))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v629 = v623._conv_forward
        v630 = v629.__func__
        if not (v630 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v630))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256, 256, 3, 3), stride=(2304, 9, 3, 1), device=cpu, requires_grad=True))"
        v631 = v623._parameters
        v632 = v631['weight']
        if not (type(v632) is Parameter_16 and v632.dtype is torch.float32 and v632.device == torch.device('cpu') and v632.shape == (256, 256, 3, 3) and v632.stride() == (2304, 9, 3, 1) and v632.requires_grad is True and v632.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v632))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1']._parameters['bias'] is None"
        v633 = v631['bias']
        if not (v633 is None):
            return _rt.Fail(_at, _rt.describe(v633))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding_mode == 'zeros'"
        v634 = v623.padding_mode
        if not (type(v634) is str and v634 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v634))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride (expected builtins.tuple)"
        v635 = v623.stride
        if not (type(v635) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v635))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].stride) == 2"
        if not (len(v635) == 2):
            return _rt.Fail(_at, _rt.describe(v635))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride[0] == 1"
        v636 = v635[0]
        if not (type(v636) is int and v636 == 1):
            return _rt.Fail(_at, _rt.describe(v636))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].stride[1] == 1"
        v637 = v635[1]
        if not (type(v637) is int and v637 == 1):
            return _rt.Fail(_at, _rt.describe(v637))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding (expected builtins.tuple)"
        v638 = v623.padding
        if not (type(v638) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v638))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].padding) == 2"
        if not (len(v638) == 2):
            return _rt.Fail(_at, _rt.describe(v638))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding[0] == 1"
        v639 = v638[0]
        if not (type(v639) is int and v639 == 1):
            return _rt.Fail(_at, _rt.describe(v639))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].padding[1] == 1"
        v640 = v638[1]
        if not (type(v640) is int and v640 == 1):
            return _rt.Fail(_at, _rt.describe(v640))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation (expected builtins.tuple)"
        v641 = v623.dilation
        if not (type(v641) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v641))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation) == 2"
        if not (len(v641) == 2):
            return _rt.Fail(_at, _rt.describe(v641))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation[0] == 1"
        v642 = v641[0]
        if not (type(v642) is int and v642 == 1):
            return _rt.Fail(_at, _rt.describe(v642))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].dilation[1] == 1"
        v643 = v641[1]
        if not (type(v643) is int and v643 == 1):
            return _rt.Fail(_at, _rt.describe(v643))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv1'].groups == 1"
        v644 = v623.groups
        if not (type(v644) is int and v644 == 1):
            return _rt.Fail(_at, _rt.describe(v644))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v645 = v622['bn1']
        if not (type(v645) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v645))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._forward_hooks) == 0"
        v646 = v645._forward_hooks
        if not (len(v646) == 0):
            return _rt.Fail(_at, _rt.describe(v646))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._forward_pre_hooks) == 0"
        v647 = v645._forward_pre_hooks
        if not (len(v647) == 0):
            return _rt.Fail(_at, _rt.describe(v647))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._backward_hooks) == 0"
        v648 = v645._backward_hooks
        if not (len(v648) == 0):
            return _rt.Fail(_at, _rt.describe(v648))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn1']._backward_pre_hooks) == 0"
        v649 = v645._backward_pre_hooks
        if not (len(v649) == 0):
            return _rt.Fail(_at, _rt.describe(v649))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].training == False"
        v650 = v645.training
        if not (type(v650) is bool and v650 == False):
            return _rt.Fail(_at, _rt.describe(v650))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v651 = v645._check_input_dim
        v652 = v651.__func__
        if not (v652 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v652))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].momentum == 0.1"
        v653 = v645.momentum
        if not (type(v653) is float and v653 == 0.1):
            return _rt.Fail(_at, _rt.describe(v653))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v654 = v645._buffers
        v655 = v654['running_mean']
        if not (type(v655) is Tensor_7 and v655.dtype is torch.float32 and v655.device == torch.device('cpu') and v655.shape == (256,) and v655.stride() == (1,) and v655.requires_grad is False and v655.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v655))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v656 = v654['running_var']
        if not (type(v656) is Tensor_7 and v656.dtype is torch.float32 and v656.device == torch.device('cpu') and v656.shape == (256,) and v656.stride() == (1,) and v656.requires_grad is False and v656.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v656))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v657 = v645._parameters
        v658 = v657['weight']
        if not (type(v658) is Parameter_16 and v658.dtype is torch.float32 and v658.device == torch.device('cpu') and v658.shape == (256,) and v658.stride() == (1,) and v658.requires_grad is True and v658.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v658))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v659 = v657['bias']
        if not (type(v659) is Parameter_16 and v659.dtype is torch.float32 and v659.device == torch.device('cpu') and v659.shape == (256,) and v659.stride() == (1,) and v659.requires_grad is True and v659.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v659))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn1'].eps == 1e-05"
        v660 = v645.eps
        if not (type(v660) is float and v660 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v660))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v661 = v622['relu']
        if not (type(v661) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v661))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._forward_hooks) == 0"
        v662 = v661._forward_hooks
        if not (len(v662) == 0):
            return _rt.Fail(_at, _rt.describe(v662))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._forward_pre_hooks) == 0"
        v663 = v661._forward_pre_hooks
        if not (len(v663) == 0):
            return _rt.Fail(_at, _rt.describe(v663))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._backward_hooks) == 0"
        v664 = v661._backward_hooks
        if not (len(v664) == 0):
            return _rt.Fail(_at, _rt.describe(v664))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['relu']._backward_pre_hooks) == 0"
        v665 = v661._backward_pre_hooks
        if not (len(v665) == 0):
            return _rt.Fail(_at, _rt.describe(v665))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['relu'].training == False"
        v666 = v661.training
        if not (type(v666) is bool and v666 == False):
            return _rt.Fail(_at, _rt.describe(v666))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v667 = v622['conv2']
        if not (type(v667) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v667))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._forward_hooks) == 0"
        v668 = v667._forward_hooks
        if not (len(v668) == 0):
            return _rt.Fail(_at, _rt.describe(v668))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._forward_pre_hooks) == 0"
        v669 = v667._forward_pre_hooks
        if not (len(v669) == 0):
            return _rt.Fail(_at, _rt.describe(v669))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._backward_hooks) == 0"
        v670 = v667._backward_hooks
        if not (len(v670) == 0):
            return _rt.Fail(_at, _rt.describe(v670))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2']._backward_pre_hooks) == 0"
        v671 = v667._backward_pre_hooks
        if not (len(v671) == 0):
            return _rt.Fail(_at, _rt.describe(v671))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].training == False"
        v672 = v667.training
        if not (type(v672) is bool and v672 == False):
            return _rt.Fail(_at, _rt.describe(v672))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v673 = v667._conv_forward
        v674 = v673.__func__
        if not (v674 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v674))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256, 256, 3, 3), stride=(2304, 9, 3, 1), device=cpu, requires_grad=True))"
        v675 = v667._parameters
        v676 = v675['weight']
        if not (type(v676) is Parameter_16 and v676.dtype is torch.float32 and v676.device == torch.device('cpu') and v676.shape == (256, 256, 3, 3) and v676.stride() == (2304, 9, 3, 1) and v676.requires_grad is True and v676.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v676))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2']._parameters['bias'] is None"
        v677 = v675['bias']
        if not (v677 is None):
            return _rt.Fail(_at, _rt.describe(v677))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding_mode == 'zeros'"
        v678 = v667.padding_mode
        if not (type(v678) is str and v678 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v678))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride (expected builtins.tuple)"
        v679 = v667.stride
        if not (type(v679) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v679))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].stride) == 2"
        if not (len(v679) == 2):
            return _rt.Fail(_at, _rt.describe(v679))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride[0] == 1"
        v680 = v679[0]
        if not (type(v680) is int and v680 == 1):
            return _rt.Fail(_at, _rt.describe(v680))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].stride[1] == 1"
        v681 = v679[1]
        if not (type(v681) is int and v681 == 1):
            return _rt.Fail(_at, _rt.describe(v681))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding (expected builtins.tuple)"
        v682 = v667.padding
        if not (type(v682) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v682))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].padding) == 2"
        if not (len(v682) == 2):
            return _rt.Fail(_at, _rt.describe(v682))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding[0] == 1"
        v683 = v682[0]
        if not (type(v683) is int and v683 == 1):
            return _rt.Fail(_at, _rt.describe(v683))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].padding[1] == 1"
        v684 = v682[1]
        if not (type(v684) is int and v684 == 1):
            return _rt.Fail(_at, _rt.describe(v684))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation (expected builtins.tuple)"
        v685 = v667.dilation
        if not (type(v685) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v685))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation) == 2"
        if not (len(v685) == 2):
            return _rt.Fail(_at, _rt.describe(v685))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation[0] == 1"
        v686 = v685[0]
        if not (type(v686) is int and v686 == 1):
            return _rt.Fail(_at, _rt.describe(v686))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].dilation[1] == 1"
        v687 = v685[1]
        if not (type(v687) is int and v687 == 1):
            return _rt.Fail(_at, _rt.describe(v687))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['conv2'].groups == 1"
        v688 = v667.groups
        if not (type(v688) is int and v688 == 1):
            return _rt.Fail(_at, _rt.describe(v688))
        _at = "TYPE_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v689 = v622['bn2']
        if not (type(v689) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v689))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._forward_hooks) == 0"
        v690 = v689._forward_hooks
        if not (len(v690) == 0):
            return _rt.Fail(_at, _rt.describe(v690))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._forward_pre_hooks) == 0"
        v691 = v689._forward_pre_hooks
        if not (len(v691) == 0):
            return _rt.Fail(_at, _rt.describe(v691))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._backward_hooks) == 0"
        v692 = v689._backward_hooks
        if not (len(v692) == 0):
            return _rt.Fail(_at, _rt.describe(v692))
        _at = "LENGTH_CHECK len(L['model']._modules['layer3']._modules['1']._modules['bn2']._backward_pre_hooks) == 0"
        v693 = v689._backward_pre_hooks
        if not (len(v693) == 0):
            return _rt.Fail(_at, _rt.describe(v693))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].training == False"
        v694 = v689.training
        if not (type(v694) is bool and v694 == False):
            return _rt.Fail(_at, _rt.describe(v694))
        _at = "ID_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v695 = v689._check_input_dim
        v696 = v695.__func__
        if not (v696 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v696))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].momentum == 0.1"
        v697 = v689.momentum
        if not (type(v697) is float and v697 == 0.1):
            return _rt.Fail(_at, _rt.describe(v697))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v698 = v689._buffers
        v699 = v698['running_mean']
        if not (type(v699) is Tensor_7 and v699.dtype is torch.float32 and v699.device == torch.device('cpu') and v699.shape == (256,) and v699.stride() == (1,) and v699.requires_grad is False and v699.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v699))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=False))"
        v700 = v698['running_var']
        if not (type(v700) is Tensor_7 and v700.dtype is torch.float32 and v700.device == torch.device('cpu') and v700.shape == (256,) and v700.stride() == (1,) and v700.requires_grad is False and v700.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v700))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v701 = v689._parameters
        v702 = v701['weight']
        if not (type(v702) is Parameter_16 and v702.dtype is torch.float32 and v702.device == torch.device('cpu') and v702.shape == (256,) and v702.stride() == (1,) and v702.requires_grad is True and v702.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v702))
        _at = "TENSOR_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(256,), stride=(1,), device=cpu, requires_grad=True))"
        v703 = v701['bias']
        if not (type(v703) is Parameter_16 and v703.dtype is torch.float32 and v703.device == torch.device('cpu') and v703.shape == (256,) and v703.stride() == (1,) and v703.requires_grad is True and v703.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v703))
        _at = "EQUALS_MATCH L['model']._modules['layer3']._modules['1']._modules['bn2'].eps == 1e-05"
        v704 = v689.eps
        if not (type(v704) is float and v704 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v704))
        _at = "NONE_MATCH L['model']._modules['layer3']._modules['1'].downsample is None"
        v705 = v617.downsample
        if not (v705 is None):
            return _rt.Fail(_at, _rt.describe(v705))
        _at = "TYPE_MATCH L['model']._modules['layer4'] (expected torch.nn.modules.container.Sequential)"
        v706 = v6['layer4']
        if not (type(v706) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v706))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._forward_hooks) == 0"
        v707 = v706._forward_hooks
        if not (len(v707) == 0):
            return _rt.Fail(_at, _rt.describe(v707))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._forward_pre_hooks) == 0"
        v708 = v706._forward_pre_hooks
        if not (len(v708) == 0):
            return _rt.Fail(_at, _rt.describe(v708))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._backward_hooks) == 0"
        v709 = v706._backward_hooks
        if not (len(v709) == 0):
            return _rt.Fail(_at, _rt.describe(v709))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._backward_pre_hooks) == 0"
        v710 = v706._backward_pre_hooks
        if not (len(v710) == 0):
            return _rt.Fail(_at, _rt.describe(v710))
        _at = "EQUALS_MATCH L['model']._modules['layer4'].training == False"
        v711 = v706.training
        if not (type(v711) is bool and v711 == False):
            return _rt.Fail(_at, _rt.describe(v711))
        _at = "DICT_KEYS L['model']._modules['layer4']._modules == ['0', '1']"
        v712 = v706._modules
        if not (list(v712.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v712))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0'] (expected torchvision.models.resnet.BasicBlock)"
        v713 = v712['0']
        if not (type(v713) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v713))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._forward_hooks) == 0"
        v714 = v713._forward_hooks
        if not (len(v714) == 0):
            return _rt.Fail(_at, _rt.describe(v714))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._forward_pre_hooks) == 0"
        v715 = v713._forward_pre_hooks
        if not (len(v715) == 0):
            return _rt.Fail(_at, _rt.describe(v715))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._backward_hooks) == 0"
        v716 = v713._backward_hooks
        if not (len(v716) == 0):
            return _rt.Fail(_at, _rt.describe(v716))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._backward_pre_hooks) == 0"
        v717 = v713._backward_pre_hooks
        if not (len(v717) == 0):
            return _rt.Fail(_at, _rt.describe(v717))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v718 = v713._modules
        v719 = v718['conv1']
        if not (type(v719) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v719))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._forward_hooks) == 0"
        v720 = v719._forward_hooks
        if not (len(v720) == 0):
            return _rt.Fail(_at, _rt.describe(v720))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._forward_pre_hooks) == 0"
        v721 = v719._forward_pre_hooks
        if not (len(v721) == 0):
            return _rt.Fail(_at, _rt.describe(v721))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._backward_hooks) == 0"
        v722 = v719._backward_hooks
        if not (len(v722) == 0):
            return _rt.Fail(_at, _rt.describe(v722))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1']._backward_pre_hooks) == 0"
        v723 = v719._backward_pre_hooks
        if not (len(v723) == 0):
            return _rt.Fail(_at, _rt.describe(v723))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].training == False"
        v724 = v719.training
        if not (type(v724) is bool and v724 == False):
            return _rt.Fail(_at, _rt.describe(v724))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v725 = v719._conv_forward
        v726 = v725.__func__
        if not (v726 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v726))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512, 256, 3, 3), stride=(2304, 9, 3, 1), device=cpu, requires_grad=True))"
        v727 = v719._parameters
        v728 = v727['weight']
        if not (type(v728) is Parameter_16 and v728.dtype is torch.float32 and v728.device == torch.device('cpu') and v728.shape == (512, 256, 3, 3) and v728.stride() == (2304, 9, 3, 1) and v728.requires_grad is True and v728.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v728))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1']._parameters['bias'] is None"
        v729 = v727['bias']
        if not (v729 is None):
            return _rt.Fail(_at, _rt.describe(v729))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding_mode == 'zeros'"
        v730 = v719.padding_mode
        if not (type(v730) is str and v730 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v730))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride (expected builtins.tuple)"
        v731 = v719.stride
        if not (type(v731) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v731))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].stride) == 2"
        if not (len(v731) == 2):
            return _rt.Fail(_at, _rt.describe(v731))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride[0] == 2"
        v732 = v731[0]
        if not (type(v732) is int and v732 == 2):
            return _rt.Fail(_at, _rt.describe(v732))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].stride[1] == 2"
        v733 = v731[1]
        if not (type(v733) is int and v733 == 2):
            return _rt.Fail(_at, _rt.describe(v733))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding (expected builtins.tuple)"
        v734 = v719.padding
        if not (type(v734) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v734))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].padding) == 2"
        if not (len(v734) == 2):
            return _rt.Fail(_at, _rt.describe(v734))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding[0] == 1"
        v735 = v734[0]
        if not (type(v735) is int and v735 == 1):
            return _rt.Fail(_at, _rt.describe(v735))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].padding[1] == 1"
        v736 = v734[1]
        if not (type(v736) is int and v736 == 1):
            return _rt.Fail(_at, _rt.describe(v736))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation (expected builtins.tuple)"
        v737 = v719.dilation
        if not (type(v737) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v737))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation) == 2"
        if not (len(v737) == 2):
            return _rt.Fail(_at, _rt.describe(v737))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation[0] == 1"
        v738 = v737[0]
        if not (type(v738) is int and v738 == 1):
            return _rt.Fail(_at, _rt.describe(v738))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].dilation[1] == 1"
        v739 = v737[1]
        if not (type(v739) is int and v739 == 1):
            return _rt.Fail(_at, _rt.describe(v739))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv1'].groups == 1"
        v740 = v719.groups
        if not (type(v740) is int and v740 == 1):
            return _rt.Fail(_at, _rt.describe(v740))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v741 = v718['bn1']
        if not (type(v741) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v741))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._forward_hooks) == 0"
        v742 = v741._forward_hooks
        if not (len(v742) == 0):
            return _rt.Fail(_at, _rt.describe(v742))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._forward_pre_hooks) == 0"
        v743 = v741._forward_pre_hooks
        if not (len(v743) == 0):
            return _rt.Fail(_at, _rt.describe(v743))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._backward_hooks) == 0"
        v744 = v741._backward_hooks
        if not (len(v744) == 0):
            return _rt.Fail(_at, _rt.describe(v744))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn1']._backward_pre_hooks) == 0"
        v745 = v741._backward_pre_hooks
        if not (len(v745) == 0):
            return _rt.Fail(_at, _rt.describe(v745))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].training == False"
        v746 = v741.training
        if not (type(v746) is bool and v746 == False):
            return _rt.Fail(_at, _rt.describe(v746))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v747 = v741._check_input_dim
        v748 = v747.__func__
        if not (v748 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v748))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].momentum == 0.1"
        v749 = v741.momentum
        if not (type(v749) is float and v749 == 0.1):
            return _rt.Fail(_at, _rt.describe(v749))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v750 = v741._buffers
        v751 = v750['running_mean']
        if not (type(v751) is Tensor_7 and v751.dtype is torch.float32 and v751.device == torch.device('cpu') and v751.shape == (512,) and v751.stride() == (1,) and v751.requires_grad is False and v751.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v751))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v752 = v750['running_var']
        if not (type(v752) is Tensor_7 and v752.dtype is torch.float32 and v752.device == torch.device('cpu') and v752.shape == (512,) and v752.stride() == (1,) and v752.requires_grad is False and v752.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v752))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v753 = v741._parameters
        v754 = v753['weight']
        if not (type(v754) is Parameter_16 and v754.dtype is torch.float32 and v754.device == torch.device('cpu') and v754.shape == (512,) and v754.stride() == (1,) and v754.requires_grad is True and v754.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v754))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v755 = v753['bias']
        if not (type(v755) is Parameter_16 and v755.dtype is torch.float32 and v755.device == torch.device('cpu') and v755.shape == (512,) and v755.stride() == (1,) and v755.requires_grad is True and v755.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v755))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn1'].eps == 1e-05"
        v756 = v741.eps
        if not (type(v756) is float and v756 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v756))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v757 = v718['relu']
        if not (type(v757) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v757))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._forward_hooks) == 0"
        v758 = v757._forward_hooks
        if not (len(v758) == 0):
            return _rt.Fail(_at, _rt.describe(v758))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._forward_pre_hooks) == 0"
        v759 = v757._forward_pre_hooks
        if not (len(v759) == 0):
            return _rt.Fail(_at, _rt.describe(v759))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._backward_hooks) == 0"
        v760 = v757._backward_hooks
        if not (len(v760) == 0):
            return _rt.Fail(_at, _rt.describe(v760))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['relu']._backward_pre_hooks) == 0"
        v761 = v757._backward_pre_hooks
        if not (len(v761) == 0):
            return _rt.Fail(_at, _rt.describe(v761))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['relu'].training == False"
        v762 = v757.training
        if not (type(v762) is bool and v762 == False):
            return _rt.Fail(_at, _rt.describe(v762))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v763 = v718['conv2']
        if not (type(v763) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v763))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._forward_hooks) == 0"
        v764 = v763._forward_hooks
        if not (len(v764) == 0):
            return _rt.Fail(_at, _rt.describe(v764))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._forward_pre_hooks) == 0"
        v765 = v763._forward_pre_hooks
        if not (len(v765) == 0):
            return _rt.Fail(_at, _rt.describe(v765))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._backward_hooks) == 0"
        v766 = v763._backward_hooks
        if not (len(v766) == 0):
            return _rt.Fail(_at, _rt.describe(v766))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2']._backward_pre_hooks) == 0"
        v767 = v763._backward_pre_hooks
        if not (len(v767) == 0):
            return _rt.Fail(_at, _rt.describe(v767))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].training == False"
        v768 = v763.training
        if not (type(v768) is bool and v768 == False):
            return _rt.Fail(_at, _rt.describe(v768))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v769 = v763._conv_forward
        v770 = v769.__func__
        if not (v770 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v770))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512, 512, 3, 3), stride=(4608, 9, 3, 1), device=cpu, requires_grad=True))"
        v771 = v763._parameters
        v772 = v771['weight']
        if not (type(v772) is Parameter_16 and v772.dtype is torch.float32 and v772.device == torch.device('cpu') and v772.shape == (512, 512, 3, 3) and v772.stride() == (4608, 9, 3, 1) and v772.requires_grad is True and v772.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v772))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2']._parameters['bias'] is None"
        v773 = v771['bias']
        if not (v773 is None):
            return _rt.Fail(_at, _rt.describe(v773))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding_mode == 'zeros'"
        v774 = v763.padding_mode
        if not (type(v774) is str and v774 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v774))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride (expected builtins.tuple)"
        v775 = v763.stride
        if not (type(v775) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v775))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].stride) == 2"
        if not (len(v775) == 2):
            return _rt.Fail(_at, _rt.describe(v775))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride[0] == 1"
        v776 = v775[0]
        if not (type(v776) is int and v776 == 1):
            return _rt.Fail(_at, _rt.describe(v776))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].stride[1] == 1"
        v777 = v775[1]
        if not (type(v777) is int and v777 == 1):
            return _rt.Fail(_at, _rt.describe(v777))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding (expected builtins.tuple)"
        v778 = v763.padding
        if not (type(v778) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v778))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].padding) == 2"
        if not (len(v778) == 2):
            return _rt.Fail(_at, _rt.describe(v778))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding[0] == 1"
        v779 = v778[0]
        if not (type(v779) is int and v779 == 1):
            return _rt.Fail(_at, _rt.describe(v779))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].padding[1] == 1"
        v780 = v778[1]
        if not (type(v780) is int and v780 == 1):
            return _rt.Fail(_at, _rt.describe(v780))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation (expected builtins.tuple)"
        v781 = v763.dilation
        if not (type(v781) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v781))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation) == 2"
        if not (len(v781) == 2):
            return _rt.Fail(_at, _rt.describe(v781))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation[0] == 1"
        v782 = v781[0]
        if not (type(v782) is int and v782 == 1):
            return _rt.Fail(_at, _rt.describe(v782))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].dilation[1] == 1"
        v783 = v781[1]
        if not (type(v783) is int and v783 == 1):
            return _rt.Fail(_at, _rt.describe(v783))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['conv2'].groups == 1"
        v784 = v763.groups
        if not (type(v784) is int and v784 == 1):
            return _rt.Fail(_at, _rt.describe(v784))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v785 = v718['bn2']
        if not (type(v785) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v785))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._forward_hooks) == 0"
        v786 = v785._forward_hooks
        if not (len(v786) == 0):
            return _rt.Fail(_at, _rt.describe(v786))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._forward_pre_hooks) == 0"
        v787 = v785._forward_pre_hooks
        if not (len(v787) == 0):
            return _rt.Fail(_at, _rt.describe(v787))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._backward_hooks) == 0"
        v788 = v785._backward_hooks
        if not (len(v788) == 0):
            return _rt.Fail(_at, _rt.describe(v788))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['bn2']._backward_pre_hooks) == 0"
        v789 = v785._backward_pre_hooks
        if not (len(v789) == 0):
            return _rt.Fail(_at, _rt.describe(v789))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].training == False"
        v790 = v785.training
        if not (type(v790) is bool and v790 == False):
            return _rt.Fail(_at, _rt.describe(v790))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v791 = v785._check_input_dim
        v792 = v791.__func__
        if not (v792 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v792))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].momentum == 0.1"
        v793 = v785.momentum
        if not (type(v793) is float and v793 == 0.1):
            return _rt.Fail(_at, _rt.describe(v793))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v794 = v785._buffers
        v795 = v794['running_mean']
        if not (type(v795) is Tensor_7 and v795.dtype is torch.float32 and v795.device == torch.device('cpu') and v795.shape == (512,) and v795.stride() == (1,) and v795.requires_grad is False and v795.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v795))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v796 = v794['running_var']
        if not (type(v796) is Tensor_7 and v796.dtype is torch.float32 and v796.device == torch.device('cpu') and v796.shape == (512,) and v796.stride() == (1,) and v796.requires_grad is False and v796.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v796))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v797 = v785._parameters
        v798 = v797['weight']
        if not (type(v798) is Parameter_16 and v798.dtype is torch.float32 and v798.device == torch.device('cpu') and v798.shape == (512,) and v798.stride() == (1,) and v798.requires_grad is True and v798.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v798))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v799 = v797['bias']
        if not (type(v799) is Parameter_16 and v799.dtype is torch.float32 and v799.device == torch.device('cpu') and v799.shape == (512,) and v799.stride() == (1,) and v799.requires_grad is True and v799.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v799))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['bn2'].eps == 1e-05"
        v800 = v785.eps
        if not (type(v800) is float and v800 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v800))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample'] (expected torch.nn.modules.container.Sequential)"
        v801 = v718['downsample']
        if not (type(v801) is Sequential_22):
            return _rt.Fail(_at, _rt.describe(v801))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._forward_hooks) == 0"
        v802 = v801._forward_hooks
        if not (len(v802) == 0):
            return _rt.Fail(_at, _rt.describe(v802))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._forward_pre_hooks) == 0"
        v803 = v801._forward_pre_hooks
        if not (len(v803) == 0):
            return _rt.Fail(_at, _rt.describe(v803))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._backward_hooks) == 0"
        v804 = v801._backward_hooks
        if not (len(v804) == 0):
            return _rt.Fail(_at, _rt.describe(v804))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._backward_pre_hooks) == 0"
        v805 = v801._backward_pre_hooks
        if not (len(v805) == 0):
            return _rt.Fail(_at, _rt.describe(v805))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample'].training == False"
        v806 = v801.training
        if not (type(v806) is bool and v806 == False):
            return _rt.Fail(_at, _rt.describe(v806))
        _at = "DICT_KEYS L['model']._modules['layer4']._modules['0']._modules['downsample']._modules == ['0', '1']"
        v807 = v801._modules
        if not (list(v807.keys()) == ['0', '1']):
            return _rt.Fail(_at, _rt.describe(v807))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'] (expected torch.nn.modules.conv.Conv2d)"
        v808 = v807['0']
        if not (type(v808) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v808))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._forward_hooks) == 0"
        v809 = v808._forward_hooks
        if not (len(v809) == 0):
            return _rt.Fail(_at, _rt.describe(v809))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._forward_pre_hooks) == 0"
        v810 = v808._forward_pre_hooks
        if not (len(v810) == 0):
            return _rt.Fail(_at, _rt.describe(v810))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._backward_hooks) == 0"
        v811 = v808._backward_hooks
        if not (len(v811) == 0):
            return _rt.Fail(_at, _rt.describe(v811))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._backward_pre_hooks) == 0"
        v812 = v808._backward_pre_hooks
        if not (len(v812) == 0):
            return _rt.Fail(_at, _rt.describe(v812))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].training == False"
        v813 = v808.training
        if not (type(v813) is bool and v813 == False):
            return _rt.Fail(_at, _rt.describe(v813))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v814 = v808._conv_forward
        v815 = v814.__func__
        if not (v815 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v815))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512, 256, 1, 1), stride=(256, 1, 1, 1), device=cpu, requires_grad=True))"
        v816 = v808._parameters
        v817 = v816['weight']
        if not (type(v817) is Parameter_16 and v817.dtype is torch.float32 and v817.device == torch.device('cpu') and v817.shape == (512, 256, 1, 1) and v817.stride() == (256, 1, 1, 1) and v817.requires_grad is True and v817.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v817))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._parameters['bias'] is None"
        v818 = v816['bias']
        if not (v818 is None):
            return _rt.Fail(_at, _rt.describe(v818))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding_mode == 'zeros'"
        v819 = v808.padding_mode
        if not (type(v819) is str and v819 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v819))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride (expected builtins.tuple)"
        v820 = v808.stride
        if not (type(v820) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v820))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride) == 2"
        if not (len(v820) == 2):
            return _rt.Fail(_at, _rt.describe(v820))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride[0] == 2"
        v821 = v820[0]
        if not (type(v821) is int and v821 == 2):
            return _rt.Fail(_at, _rt.describe(v821))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].stride[1] == 2"
        v822 = v820[1]
        if not (type(v822) is int and v822 == 2):
            return _rt.Fail(_at, _rt.describe(v822))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding (expected builtins.tuple)"
        v823 = v808.padding
        if not (type(v823) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v823))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding) == 2"
        if not (len(v823) == 2):
            return _rt.Fail(_at, _rt.describe(v823))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding[0] == 0"
        v824 = v823[0]
        if not (type(v824) is int and v824 == 0):
            return _rt.Fail(_at, _rt.describe(v824))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].padding[1] == 0"
        v825 = v823[1]
        if not (type(v825) is int and v825 == 0):
            return _rt.Fail(_at, _rt.describe(v825))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation (expected builtins.tuple)"
        v826 = v808.dilation
        if not (type(v826) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v826))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation) == 2"
        if not (len(v826) == 2):
            return _rt.Fail(_at, _rt.describe(v826))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation[0] == 1"
        v827 = v826[0]
        if not (type(v827) is int and v827 == 1):
            return _rt.Fail(_at, _rt.describe(v827))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].dilation[1] == 1"
        v828 = v826[1]
        if not (type(v828) is int and v828 == 1):
            return _rt.Fail(_at, _rt.describe(v828))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0'].groups == 1"
        v829 = v808.groups
        if not (type(v829) is int and v829 == 1):
            return _rt.Fail(_at, _rt.describe(v829))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v830 = v807['1']
        if not (type(v830) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v830))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._forward_hooks) == 0"
        v831 = v830._forward_hooks
        if not (len(v831) == 0):
            return _rt.Fail(_at, _rt.describe(v831))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._forward_pre_hooks) == 0"
        v832 = v830._forward_pre_hooks
        if not (len(v832) == 0):
            return _rt.Fail(_at, _rt.describe(v832))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._backward_hooks) == 0"
        v833 = v830._backward_hooks
        if not (len(v833) == 0):
            return _rt.Fail(_at, _rt.describe(v833))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._backward_pre_hooks) == 0"
        v834 = v830._backward_pre_hooks
        if not (len(v834) == 0):
            return _rt.Fail(_at, _rt.describe(v834))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].training == False"
        v835 = v830.training
        if not (type(v835) is bool and v835 == False):
            return _rt.Fail(_at, _rt.describe(v835))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v836 = v830._check_input_dim
        v837 = v836.__func__
        if not (v837 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v837))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].momentum == 0.1"
        v838 = v830.momentum
        if not (type(v838) is float and v838 == 0.1):
            return _rt.Fail(_at, _rt.describe(v838))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v839 = v830._buffers
        v840 = v839['running_mean']
        if not (type(v840) is Tensor_7 and v840.dtype is torch.float32 and v840.device == torch.device('cpu') and v840.shape == (512,) and v840.stride() == (1,) and v840.requires_grad is False and v840.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v840))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v841 = v839['running_var']
        if not (type(v841) is Tensor_7 and v841.dtype is torch.float32 and v841.device == torch.device('cpu') and v841.shape == (512,) and v841.stride() == (1,) and v841.requires_grad is False and v841.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v841))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v842 = v830._parameters
        v843 = v842['weight']
        if not (type(v843) is Parameter_16 and v843.dtype is torch.float32 and v843.device == torch.device('cpu') and v843.shape == (512,) and v843.stride() == (1,) and v843.requires_grad is True and v843.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v843))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v844 = v842['bias']
        if not (type(v844) is Parameter_16 and v844.dtype is torch.float32 and v844.device == torch.device('cpu') and v844.shape == (512,) and v844.stride() == (1,) and v844.requires_grad is True and v844.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v844))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1'].eps == 1e-05"
        v845 = v830.eps
        if not (type(v845) is float and v845 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v845))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1'] (expected torchvision.models.resnet.BasicBlock)"
        v846 = v712['1']
        if not (type(v846) is BasicBlock_23):
            return _rt.Fail(_at, _rt.describe(v846))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._forward_hooks) == 0"
        v847 = v846._forward_hooks
        if not (len(v847) == 0):
            return _rt.Fail(_at, _rt.describe(v847))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._forward_pre_hooks) == 0"
        v848 = v846._forward_pre_hooks
        if not (len(v848) == 0):
            return _rt.Fail(_at, _rt.describe(v848))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._backward_hooks) == 0"
        v849 = v846._backward_hooks
        if not (len(v849) == 0):
            return _rt.Fail(_at, _rt.describe(v849))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._backward_pre_hooks) == 0"
        v850 = v846._backward_pre_hooks
        if not (len(v850) == 0):
            return _rt.Fail(_at, _rt.describe(v850))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'] (expected torch.nn.modules.conv.Conv2d)"
        v851 = v846._modules
        v852 = v851['conv1']
        if not (type(v852) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v852))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._forward_hooks) == 0"
        v853 = v852._forward_hooks
        if not (len(v853) == 0):
            return _rt.Fail(_at, _rt.describe(v853))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._forward_pre_hooks) == 0"
        v854 = v852._forward_pre_hooks
        if not (len(v854) == 0):
            return _rt.Fail(_at, _rt.describe(v854))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._backward_hooks) == 0"
        v855 = v852._backward_hooks
        if not (len(v855) == 0):
            return _rt.Fail(_at, _rt.describe(v855))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1']._backward_pre_hooks) == 0"
        v856 = v852._backward_pre_hooks
        if not (len(v856) == 0):
            return _rt.Fail(_at, _rt.describe(v856))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].training == False"
        v857 = v852.training
        if not (type(v857) is bool and v857 == False):
            return _rt.Fail(_at, _rt.describe(v857))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v858 = v852._conv_forward
        v859 = v858.__func__
        if not (v859 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v859))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512, 512, 3, 3), stride=(4608, 9, 3, 1), device=cpu, requires_grad=True))"
        v860 = v852._parameters
        v861 = v860['weight']
        if not (type(v861) is Parameter_16 and v861.dtype is torch.float32 and v861.device == torch.device('cpu') and v861.shape == (512, 512, 3, 3) and v861.stride() == (4608, 9, 3, 1) and v861.requires_grad is True and v861.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v861))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1']._parameters['bias'] is None"
        v862 = v860['bias']
        if not (v862 is None):
            return _rt.Fail(_at, _rt.describe(v862))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding_mode == 'zeros'"
        v863 = v852.padding_mode
        if not (type(v863) is str and v863 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v863))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride (expected builtins.tuple)"
        v864 = v852.stride
        if not (type(v864) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v864))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].stride) == 2"
        if not (len(v864) == 2):
            return _rt.Fail(_at, _rt.describe(v864))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride[0] == 1"
        v865 = v864[0]
        if not (type(v865) is int and v865 == 1):
            return _rt.Fail(_at, _rt.describe(v865))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].stride[1] == 1"
        v866 = v864[1]
        if not (type(v866) is int and v866 == 1):
            return _rt.Fail(_at, _rt.describe(v866))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding (expected builtins.tuple)"
        v867 = v852.padding
        if not (type(v867) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v867))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].padding) == 2"
        if not (len(v867) == 2):
            return _rt.Fail(_at, _rt.describe(v867))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding[0] == 1"
        v868 = v867[0]
        if not (type(v868) is int and v868 == 1):
            return _rt.Fail(_at, _rt.describe(v868))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].padding[1] == 1"
        v869 = v867[1]
        if not (type(v869) is int and v869 == 1):
            return _rt.Fail(_at, _rt.describe(v869))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation (expected builtins.tuple)"
        v870 = v852.dilation
        if not (type(v870) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v870))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation) == 2"
        if not (len(v870) == 2):
            return _rt.Fail(_at, _rt.describe(v870))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation[0] == 1"
        v871 = v870[0]
        if not (type(v871) is int and v871 == 1):
            return _rt.Fail(_at, _rt.describe(v871))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].dilation[1] == 1"
        v872 = v870[1]
        if not (type(v872) is int and v872 == 1):
            return _rt.Fail(_at, _rt.describe(v872))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv1'].groups == 1"
        v873 = v852.groups
        if not (type(v873) is int and v873 == 1):
            return _rt.Fail(_at, _rt.describe(v873))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v874 = v851['bn1']
        if not (type(v874) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v874))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._forward_hooks) == 0"
        v875 = v874._forward_hooks
        if not (len(v875) == 0):
            return _rt.Fail(_at, _rt.describe(v875))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._forward_pre_hooks) == 0"
        v876 = v874._forward_pre_hooks
        if not (len(v876) == 0):
            return _rt.Fail(_at, _rt.describe(v876))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._backward_hooks) == 0"
        v877 = v874._backward_hooks
        if not (len(v877) == 0):
            return _rt.Fail(_at, _rt.describe(v877))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn1']._backward_pre_hooks) == 0"
        v878 = v874._backward_pre_hooks
        if not (len(v878) == 0):
            return _rt.Fail(_at, _rt.describe(v878))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].training == False"
        v879 = v874.training
        if not (type(v879) is bool and v879 == False):
            return _rt.Fail(_at, _rt.describe(v879))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v880 = v874._check_input_dim
        v881 = v880.__func__
        if not (v881 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v881))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].momentum == 0.1"
        v882 = v874.momentum
        if not (type(v882) is float and v882 == 0.1):
            return _rt.Fail(_at, _rt.describe(v882))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v883 = v874._buffers
        v884 = v883['running_mean']
        if not (type(v884) is Tensor_7 and v884.dtype is torch.float32 and v884.device == torch.device('cpu') and v884.shape == (512,) and v884.stride() == (1,) and v884.requires_grad is False and v884.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v884))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v885 = v883['running_var']
        if not (type(v885) is Tensor_7 and v885.dtype is torch.float32 and v885.device == torch.device('cpu') and v885.shape == (512,) and v885.stride() == (1,) and v885.requires_grad is False and v885.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v885))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v886 = v874._parameters
        v887 = v886['weight']
        if not (type(v887) is Parameter_16 and v887.dtype is torch.float32 and v887.device == torch.device('cpu') and v887.shape == (512,) and v887.stride() == (1,) and v887.requires_grad is True and v887.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v887))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v888 = v886['bias']
        if not (type(v888) is Parameter_16 and v888.dtype is torch.float32 and v888.device == torch.device('cpu') and v888.shape == (512,) and v888.stride() == (1,) and v888.requires_grad is True and v888.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v888))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn1'].eps == 1e-05"
        v889 = v874.eps
        if not (type(v889) is float and v889 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v889))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['relu'] (expected torch.nn.modules.activation.ReLU)"
        v890 = v851['relu']
        if not (type(v890) is ReLU_20):
            return _rt.Fail(_at, _rt.describe(v890))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._forward_hooks) == 0"
        v891 = v890._forward_hooks
        if not (len(v891) == 0):
            return _rt.Fail(_at, _rt.describe(v891))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._forward_pre_hooks) == 0"
        v892 = v890._forward_pre_hooks
        if not (len(v892) == 0):
            return _rt.Fail(_at, _rt.describe(v892))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._backward_hooks) == 0"
        v893 = v890._backward_hooks
        if not (len(v893) == 0):
            return _rt.Fail(_at, _rt.describe(v893))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['relu']._backward_pre_hooks) == 0"
        v894 = v890._backward_pre_hooks
        if not (len(v894) == 0):
            return _rt.Fail(_at, _rt.describe(v894))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['relu'].training == False"
        v895 = v890.training
        if not (type(v895) is bool and v895 == False):
            return _rt.Fail(_at, _rt.describe(v895))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'] (expected torch.nn.modules.conv.Conv2d)"
        v896 = v851['conv2']
        if not (type(v896) is Conv2d_14):
            return _rt.Fail(_at, _rt.describe(v896))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._forward_hooks) == 0"
        v897 = v896._forward_hooks
        if not (len(v897) == 0):
            return _rt.Fail(_at, _rt.describe(v897))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._forward_pre_hooks) == 0"
        v898 = v896._forward_pre_hooks
        if not (len(v898) == 0):
            return _rt.Fail(_at, _rt.describe(v898))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._backward_hooks) == 0"
        v899 = v896._backward_hooks
        if not (len(v899) == 0):
            return _rt.Fail(_at, _rt.describe(v899))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2']._backward_pre_hooks) == 0"
        v900 = v896._backward_pre_hooks
        if not (len(v900) == 0):
            return _rt.Fail(_at, _rt.describe(v900))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].training == False"
        v901 = v896.training
        if not (type(v901) is bool and v901 == False):
            return _rt.Fail(_at, _rt.describe(v901))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._conv_forward.__func__ is torch.nn.modules.conv.Conv2d._conv_forward"
        v902 = v896._conv_forward
        v903 = v902.__func__
        if not (v903 is _conv_forward_15):
            return _rt.Fail(_at, _rt.describe(v903))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512, 512, 3, 3), stride=(4608, 9, 3, 1), device=cpu, requires_grad=True))"
        v904 = v896._parameters
        v905 = v904['weight']
        if not (type(v905) is Parameter_16 and v905.dtype is torch.float32 and v905.device == torch.device('cpu') and v905.shape == (512, 512, 3, 3) and v905.stride() == (4608, 9, 3, 1) and v905.requires_grad is True and v905.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v905))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2']._parameters['bias'] is None"
        v906 = v904['bias']
        if not (v906 is None):
            return _rt.Fail(_at, _rt.describe(v906))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding_mode == 'zeros'"
        v907 = v896.padding_mode
        if not (type(v907) is str and v907 == 'zeros'):
            return _rt.Fail(_at, _rt.describe(v907))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride (expected builtins.tuple)"
        v908 = v896.stride
        if not (type(v908) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v908))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].stride) == 2"
        if not (len(v908) == 2):
            return _rt.Fail(_at, _rt.describe(v908))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride[0] == 1"
        v909 = v908[0]
        if not (type(v909) is int and v909 == 1):
            return _rt.Fail(_at, _rt.describe(v909))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].stride[1] == 1"
        v910 = v908[1]
        if not (type(v910) is int and v910 == 1):
            return _rt.Fail(_at, _rt.describe(v910))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding (expected builtins.tuple)"
        v911 = v896.padding
        if not (type(v911) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v911))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].padding) == 2"
        if not (len(v911) == 2):
            return _rt.Fail(_at, _rt.describe(v911))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding[0] == 1"
        v912 = v911[0]
        if not (type(v912) is int and v912 == 1):
            return _rt.Fail(_at, _rt.describe(v912))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].padding[1] == 1"
        v913 = v911[1]
        if not (type(v913) is int and v913 == 1):
            return _rt.Fail(_at, _rt.describe(v913))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation (expected builtins.tuple)"
        v914 = v896.dilation
        if not (type(v914) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v914))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation) == 2"
        if not (len(v914) == 2):
            return _rt.Fail(_at, _rt.describe(v914))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation[0] == 1"
        v915 = v914[0]
        if not (type(v915) is int and v915 == 1):
            return _rt.Fail(_at, _rt.describe(v915))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].dilation[1] == 1"
        v916 = v914[1]
        if not (type(v916) is int and v916 == 1):
            return _rt.Fail(_at, _rt.describe(v916))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['conv2'].groups == 1"
        v917 = v896.groups
        if not (type(v917) is int and v917 == 1):
            return _rt.Fail(_at, _rt.describe(v917))
        _at = "TYPE_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'] (expected torch.nn.modules.batchnorm.BatchNorm2d)"
        v918 = v851['bn2']
        if not (type(v918) is BatchNorm2d_18):
            return _rt.Fail(_at, _rt.describe(v918))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._forward_hooks) == 0"
        v919 = v918._forward_hooks
        if not (len(v919) == 0):
            return _rt.Fail(_at, _rt.describe(v919))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._forward_pre_hooks) == 0"
        v920 = v918._forward_pre_hooks
        if not (len(v920) == 0):
            return _rt.Fail(_at, _rt.describe(v920))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._backward_hooks) == 0"
        v921 = v918._backward_hooks
        if not (len(v921) == 0):
            return _rt.Fail(_at, _rt.describe(v921))
        _at = "LENGTH_CHECK len(L['model']._modules['layer4']._modules['1']._modules['bn2']._backward_pre_hooks) == 0"
        v922 = v918._backward_pre_hooks
        if not (len(v922) == 0):
            return _rt.Fail(_at, _rt.describe(v922))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].training == False"
        v923 = v918.training
        if not (type(v923) is bool and v923 == False):
            return _rt.Fail(_at, _rt.describe(v923))
        _at = "ID_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._check_input_dim.__func__ is torch.nn.modules.batchnorm.BatchNorm2d._check_input_dim"
        v924 = v918._check_input_dim
        v925 = v924.__func__
        if not (v925 is _check_input_dim_19):
            return _rt.Fail(_at, _rt.describe(v925))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].momentum == 0.1"
        v926 = v918.momentum
        if not (type(v926) is float and v926 == 0.1):
            return _rt.Fail(_at, _rt.describe(v926))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_mean'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v927 = v918._buffers
        v928 = v927['running_mean']
        if not (type(v928) is Tensor_7 and v928.dtype is torch.float32 and v928.device == torch.device('cpu') and v928.shape == (512,) and v928.stride() == (1,) and v928.requires_grad is False and v928.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v928))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_var'] (expected Tensor(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=False))"
        v929 = v927['running_var']
        if not (type(v929) is Tensor_7 and v929.dtype is torch.float32 and v929.device == torch.device('cpu') and v929.shape == (512,) and v929.stride() == (1,) and v929.requires_grad is False and v929.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v929))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v930 = v918._parameters
        v931 = v930['weight']
        if not (type(v931) is Parameter_16 and v931.dtype is torch.float32 and v931.device == torch.device('cpu') and v931.shape == (512,) and v931.stride() == (1,) and v931.requires_grad is True and v931.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v931))
        _at = "TENSOR_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(512,), stride=(1,), device=cpu, requires_grad=True))"
        v932 = v930['bias']
        if not (type(v932) is Parameter_16 and v932.dtype is torch.float32 and v932.device == torch.device('cpu') and v932.shape == (512,) and v932.stride() == (1,) and v932.requires_grad is True and v932.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v932))
        _at = "EQUALS_MATCH L['model']._modules['layer4']._modules['1']._modules['bn2'].eps == 1e-05"
        v933 = v918.eps
        if not (type(v933) is float and v933 == 1e-05):
            return _rt.Fail(_at, _rt.describe(v933))
        _at = "NONE_MATCH L['model']._modules['layer4']._modules['1'].downsample is None"
        v934 = v846.downsample
        if not (v934 is None):
            return _rt.Fail(_at, _rt.describe(v934))
        _at = "TYPE_MATCH L['model']._modules['avgpool'] (expected torch.nn.modules.pooling.AdaptiveAvgPool2d)"
        v935 = v6['avgpool']
        if not (type(v935) is AdaptiveAvgPool2d_24):
            return _rt.Fail(_at, _rt.describe(v935))
        _at = "LENGTH_CHECK len(L['model']._modules['avgpool']._forward_hooks) == 0"
        v936 = v935._forward_hooks
        if not (len(v936) == 0):
            return _rt.Fail(_at, _rt.describe(v936))
        _at = "LENGTH_CHECK len(L['model']._modules['avgpool']._forward_pre_hooks) == 0"
        v937 = v935._forward_pre_hooks
        if not (len(v937) == 0):
            return _rt.Fail(_at, _rt.describe(v937))
        _at = "LENGTH_CHECK len(L['model']._modules['avgpool']._backward_hooks) == 0"
        v938 = v935._backward_hooks
        if not (len(v938) == 0):
            return _rt.Fail(_at, _rt.describe(v938))
        _at = "LENGTH_CHECK len(L['model']._modules['avgpool']._backward_pre_hooks) == 0"
        v939 = v935._backward_pre_hooks
        if not (len(v939) == 0):
            return _rt.Fail(_at, _rt.describe(v939))
        _at = "EQUALS_MATCH L['model']._modules['avgpool'].training == False"
        v940 = v935.training
        if not (type(v940) is bool and v940 == False):
            return _rt.Fail(_at, _rt.describe(v940))
        _at = "TYPE_MATCH L['model']._modules['avgpool'].output_size (expected builtins.tuple)"
        v941 = v935.output_size
        if not (type(v941) is tuple_17):
            return _rt.Fail(_at, _rt.describe(v941))
        _at = "LENGTH_CHECK len(L['model']._modules['avgpool'].output_size) == 2"
        if not (len(v941) == 2):
            return _rt.Fail(_at, _rt.describe(v941))
        _at = "EQUALS_MATCH L['model']._modules['avgpool'].output_size[0] == 1"
        v942 = v941[0]
        if not (type(v942) is int and v942 == 1):
            return _rt.Fail(_at, _rt.describe(v942))
        _at = "EQUALS_MATCH L['model']._modules['avgpool'].output_size[1] == 1"
        v943 = v941[1]
        if not (type(v943) is int and v943 == 1):
            return _rt.Fail(_at, _rt.describe(v943))
        _at = "TYPE_MATCH L['model']._modules['fc'] (expected torch.nn.modules.linear.Linear)"
        v944 = v6['fc']
        if not (type(v944) is Linear_25):
            return _rt.Fail(_at, _rt.describe(v944))
        _at = "LENGTH_CHECK len(L['model']._modules['fc']._forward_hooks) == 0"
        v945 = v944._forward_hooks
        if not (len(v945) == 0):
            return _rt.Fail(_at, _rt.describe(v945))
        _at = "LENGTH_CHECK len(L['model']._modules['fc']._forward_pre_hooks) == 0"
        v946 = v944._forward_pre_hooks
        if not (len(v946) == 0):
            return _rt.Fail(_at, _rt.describe(v946))
        _at = "LENGTH_CHECK len(L['model']._modules['fc']._backward_hooks) == 0"
        v947 = v944._backward_hooks
        if not (len(v947) == 0):
            return _rt.Fail(_at, _rt.describe(v947))
        _at = "LENGTH_CHECK len(L['model']._modules['fc']._backward_pre_hooks) == 0"
        v948 = v944._backward_pre_hooks
        if not (len(v948) == 0):
            return _rt.Fail(_at, _rt.describe(v948))
        _at = "EQUALS_MATCH L['model']._modules['fc'].training == False"
        v949 = v944.training
        if not (type(v949) is bool and v949 == False):
            return _rt.Fail(_at, _rt.describe(v949))
        _at = "TENSOR_MATCH L['model']._modules['fc']._parameters['weight'] (expected Parameter(dtype=torch.float32, size=(1000, 512), stride=(512, 1), device=cpu, requires_grad=True))"
        v950 = v944._parameters
        v951 = v950['weight']
        if not (type(v951) is Parameter_16 and v951.dtype is torch.float32 and v951.device == torch.device('cpu') and v951.shape == (1000, 512) and v951.stride() == (512, 1) and v951.requires_grad is True and v951.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v951))
        _at = "TENSOR_MATCH L['model']._modules['fc']._parameters['bias'] (expected Parameter(dtype=torch.float32, size=(1000,), stride=(1,), device=cpu, requires_grad=True))"
        v952 = v950['bias']
        if not (type(v952) is Parameter_16 and v952.dtype is torch.float32 and v952.device == torch.device('cpu') and v952.shape == (1000,) and v952.stride() == (1,) and v952.requires_grad is True and v952.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(v952))
        _at = "TENSOR_MATCH L['x'] (expected Tensor(dtype=torch.float32, size=(1, 3, 224, 224), stride=(150528, 50176, 224, 1), device=cpu, requires_grad=False))"
        if not (type(x) is Tensor_7 and x.dtype is torch.float32 and x.device == torch.device('cpu') and x.shape == (1, 3, 224, 224) and x.stride() == (150528, 50176, 224, 1) and x.requires_grad is False and x.layout is torch.strided):
            return _rt.Fail(_at, _rt.describe(x))
        _at = "ID_MATCH G[torch.nn.modules.conv]['F'] is module:torch.nn.functional"
        v953 = _rt.module_global(conv_26, 'F')
        if not (v953 is functional_0):
            return _rt.Fail(_at, _rt.describe(v953))
        _at = "ID_MATCH G[torch.nn.modules.batchnorm]['F'] is module:torch.nn.functional"
        v954 = _rt.module_global(batchnorm_27, 'F')
        if not (v954 is functional_0):
            return _rt.Fail(_at, _rt.describe(v954))
        _at = "ID_MATCH G[torch.nn.modules.pooling]['F'] is module:torch.nn.functional"
        v955 = _rt.module_global(pooling_28, 'F')
        if not (v955 is functional_0):
            return _rt.Fail(_at, _rt.describe(v955))
        _at = "ID_MATCH G[torchvision.models.resnet]['torch'] is module:torch"
        v956 = _rt.module_global(resnet_29, 'torch')
        if not (v956 is torch_10):
            return _rt.Fail(_at, _rt.describe(v956))
    except Exception as exc:  # a path that cannot be read fails its guard
        return _rt.Fail(_at, f'could not be read ({type(exc).__name__}: {exc})')
    outs = graph_0(
        x,  # L['x']
        v16,  # L['model']._modules['conv1']._parameters['weight']
        v39,  # L['model']._modules['bn1']._buffers['running_mean']
        v40,  # L['model']._modules['bn1']._buffers['running_var']
        v42,  # L['model']._modules['bn1']._parameters['weight']
        v43,  # L['model']._modules['bn1']._parameters['bias']
        v85,  # L['model']._modules['layer1']._modules['0']._modules['conv1']._parameters['weight']
        v108,  # L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_mean']
        v109,  # L['model']._modules['layer1']._modules['0']._modules['bn1']._buffers['running_var']
        v111,  # L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['weight']
        v112,  # L['model']._modules['layer1']._modules['0']._modules['bn1']._parameters['bias']
        v129,  # L['model']._modules['layer1']._modules['0']._modules['conv2']._parameters['weight']
        v152,  # L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_mean']
        v153,  # L['model']._modules['layer1']._modules['0']._modules['bn2']._buffers['running_var']
        v155,  # L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['weight']
        v156,  # L['model']._modules['layer1']._modules['0']._modules['bn2']._parameters['bias']
        v174,  # L['model']._modules['layer1']._modules['1']._modules['conv1']._parameters['weight']
        v197,  # L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_mean']
        v198,  # L['model']._modules['layer1']._modules['1']._modules['bn1']._buffers['running_var']
        v200,  # L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['weight']
        v201,  # L['model']._modules['layer1']._modules['1']._modules['bn1']._parameters['bias']
        v218,  # L['model']._modules['layer1']._modules['1']._modules['conv2']._parameters['weight']
        v241,  # L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_mean']
        v242,  # L['model']._modules['layer1']._modules['1']._modules['bn2']._buffers['running_var']
        v244,  # L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['weight']
        v245,  # L['model']._modules['layer1']._modules['1']._modules['bn2']._parameters['bias']
        v270,  # L['model']._modules['layer2']._modules['0']._modules['conv1']._parameters['weight']
        v293,  # L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_mean']
        v294,  # L['model']._modules['layer2']._modules['0']._modules['bn1']._buffers['running_var']
        v296,  # L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['weight']
        v297,  # L['model']._modules['layer2']._modules['0']._modules['bn1']._parameters['bias']
        v314,  # L['model']._modules['layer2']._modules['0']._modules['conv2']._parameters['weight']
        v337,  # L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_mean']
        v338,  # L['model']._modules['layer2']._modules['0']._modules['bn2']._buffers['running_var']
        v340,  # L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['weight']
        v341,  # L['model']._modules['layer2']._modules['0']._modules['bn2']._parameters['bias']
        v359,  # L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['0']._parameters['weight']
        v382,  # L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']
        v383,  # L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']
        v385,  # L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['weight']
        v386,  # L['model']._modules['layer2']._modules['0']._modules['downsample']._modules['1']._parameters['bias']
        v403,  # L['model']._modules['layer2']._modules['1']._modules['conv1']._parameters['weight']
        v426,  # L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_mean']
        v427,  # L['model']._modules['layer2']._modules['1']._modules['bn1']._buffers['running_var']
        v429,  # L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['weight']
        v430,  # L['model']._modules['layer2']._modules['1']._modules['bn1']._parameters['bias']
        v447,  # L['model']._modules['layer2']._modules['1']._modules['conv2']._parameters['weight']
        v470,  # L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_mean']
        v471,  # L['model']._modules['layer2']._modules['1']._modules['bn2']._buffers['running_var']
        v473,  # L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['weight']
        v474,  # L['model']._modules['layer2']._modules['1']._modules['bn2']._parameters['bias']
        v499,  # L['model']._modules['layer3']._modules['0']._modules['conv1']._parameters['weight']
        v522,  # L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_mean']
        v523,  # L['model']._modules['layer3']._modules['0']._modules['bn1']._buffers['running_var']
        v525,  # L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['weight']
        v526,  # L['model']._modules['layer3']._modules['0']._modules['bn1']._parameters['bias']
        v543,  # L['model']._modules['layer3']._modules['0']._modules['conv2']._parameters['weight']
        v566,  # L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_mean']
        v567,  # L['model']._modules['layer3']._modules['0']._modules['bn2']._buffers['running_var']
        v569,  # L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['weight']
        v570,  # L['model']._modules['layer3']._modules['0']._modules['bn2']._parameters['bias']
        v588,  # L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['0']._parameters['weight']
        v611,  # L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']
        v612,  # L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']
        v614,  # L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['weight']
        v615,  # L['model']._modules['layer3']._modules['0']._modules['downsample']._modules['1']._parameters['bias']
        v632,  # L['model']._modules['layer3']._modules['1']._modules['conv1']._parameters['weight']
        v655,  # L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_mean']
        v656,  # L['model']._modules['layer3']._modules['1']._modules['bn1']._buffers['running_var']
        v658,  # L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['weight']
        v659,  # L['model']._modules['layer3']._modules['1']._modules['bn1']._parameters['bias']
        v676,  # L['model']._modules['layer3']._modules['1']._modules['conv2']._parameters['weight']
        v699,  # L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_mean']
        v700,  # L['model']._modules['layer3']._modules['1']._modules['bn2']._buffers['running_var']
        v702,  # L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['weight']
        v703,  # L['model']._modules['layer3']._modules['1']._modules['bn2']._parameters['bias']
        v728,  # L['model']._modules['layer4']._modules['0']._modules['conv1']._parameters['weight']
        v751,  # L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_mean']
        v752,  # L['model']._modules['layer4']._modules['0']._modules['bn1']._buffers['running_var']
        v754,  # L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['weight']
        v755,  # L['model']._modules['layer4']._modules['0']._modules['bn1']._parameters['bias']
        v772,  # L['model']._modules['layer4']._modules['0']._modules['conv2']._parameters['weight']
        v795,  # L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_mean']
        v796,  # L['model']._modules['layer4']._modules['0']._modules['bn2']._buffers['running_var']
        v798,  # L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['weight']
        v799,  # L['model']._modules['layer4']._modules['0']._modules['bn2']._parameters['bias']
        v817,  # L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['0']._parameters['weight']
        v840,  # L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_mean']
        v841,  # L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._buffers['running_var']
        v843,  # L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['weight']
        v844,  # L['model']._modules['layer4']._modules['0']._modules['downsample']._modules['1']._parameters['bias']
        v861,  # L['model']._modules['layer4']._modules['1']._modules['conv1']._parameters['weight']
        v884,  # L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_mean']
        v885,  # L['model']._modules['layer4']._modules['1']._modules['bn1']._buffers['running_var']
        v887,  # L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['weight']
        v888,  # L['model']._modules['layer4']._modules['1']._modules['bn1']._parameters['bias']
        v905,  # L['model']._modules['layer4']._modules['1']._modules['conv2']._parameters['weight']
        v928,  # L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_mean']
        v929,  # L['model']._modules['layer4']._modules['1']._modules['bn2']._buffers['running_var']
        v931,  # L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['weight']
        v932,  # L['model']._modules['layer4']._modules['1']._modules['bn2']._parameters['bias']
        v951,  # L['model']._modules['fc']._parameters['weight']
        v952,  # L['model']._modules['fc']._parameters['bias']
    )
    return outs[0]


def call(model, x):
    """The captured computation: the first entry whose guards pass runs."""
    failures = []
    r = _entry_0(model, x)
    if type(r) is not _rt.Fail:
        return r
    failures.append(r)
    raise _rt.GuardError(
        'precompiled artifact: the arguments do not match what was captured: '
        + '; '.join(f'{f.guard} failed, got {f.actual}' for f in failures),
        failures,
    )
