"""Small reference models built from stax layers: an MLP, LeNet and a basic-block ResNet.

Each returns an ``(init_fun, apply_fun)`` pair producing logits (no softmax: pair them with
``netcl.nn.log_softmax`` in the loss). Image models take NHWC inputs.

>>> init, apply = resnet(10, stages=(1, 1))
>>> _, params, state = init(random.PRNGKey(0), (8, 32, 32, 3), return_state=True)
>>> logits, state = apply(params, x, state=state)              # train step
>>> logits, _ = apply(params, x, state=state, mode="eval")     # evaluation
"""
from ._core import positive_int
from .combinators import FanInSum, FanOut, parallel, serial, shape_dependent
from .conv import AvgPool, Conv, MaxPool
from .layers import Dense, Flatten, Identity, Relu
from .normalization import BatchNorm

__all__ = ["mlp", "lenet", "resnet", "basic_block", "GlobalAvgPool"]


def mlp(sizes, activation=Relu):
    """A multi-layer perceptron: ``Dense(sizes[0]), activation, ..., Dense(sizes[-1])``.

    ``sizes`` are the layers' output widths (the input width comes from init's
    input_shape); no activation after the last layer.

    >>> init, apply = mlp([512, 512, 10])
    >>> out_shape, params = init(random.PRNGKey(0), (-1, 784))      # out_shape (-1, 10)
    """
    sizes = list(sizes)
    if not sizes:
        raise ValueError("mlp: sizes must name at least one layer width")
    for s in sizes:
        positive_int(s, "each entry of sizes", "mlp")
    layers = []
    for s in sizes[:-1]:
        layers += [Dense(s), activation]
    return serial(*layers, Dense(sizes[-1]))


def lenet(num_classes):
    """A LeNet-5-style CNN for NHWC images (e.g. (N, 28, 28, 1)):
    Conv(6, 5x5, SAME), Relu, MaxPool 2x2 / 2, Conv(16, 5x5, VALID), Relu, MaxPool 2x2 / 2,
    Flatten, Dense(120), Relu, Dense(84), Relu, Dense(num_classes).
    """
    num_classes = positive_int(num_classes, "num_classes", "lenet")
    return serial(Conv(6, (5, 5), padding="SAME"), Relu,
                  MaxPool((2, 2), strides=(2, 2)),
                  Conv(16, (5, 5), padding="VALID"), Relu,
                  MaxPool((2, 2), strides=(2, 2)),
                  Flatten,
                  Dense(120), Relu,
                  Dense(84), Relu,
                  Dense(num_classes))


def _global_avg_pool():
    return shape_dependent(lambda shape: serial(AvgPool(tuple(shape[1:3])), Flatten))


GlobalAvgPool = _global_avg_pool()  # NHWC -> NC, the mean over H and W (a layer)


def basic_block(channels, strides=1, project=False):
    """A ResNet basic block: relu(bn(conv3x3(relu(bn(conv3x3(x))))) + shortcut(x)), the
    shortcut being the identity or, with ``project``, conv1x1(strides) + BatchNorm.
    Built as ``serial(FanOut(2), parallel(main, shortcut), FanInSum, Relu)``.
    """
    s = (strides, strides)
    main = serial(Conv(channels, (3, 3), strides=s, padding="SAME"), BatchNorm(), Relu,
                  Conv(channels, (3, 3), padding="SAME"), BatchNorm())
    shortcut = (serial(Conv(channels, (1, 1), strides=s), BatchNorm()) if project
                else Identity)
    return serial(FanOut(2), parallel(main, shortcut), FanInSum, Relu)


def resnet(num_classes, stages=(2, 2, 2), width=16):
    """A small ResNet (CIFAR-style, He et al. 2016) for NHWC images.

    Stem: Conv(width, 3x3, SAME), BatchNorm, Relu. Then one stage per entry of ``stages``
    (the entry is its number of basic blocks); stage i has ``width * 2**i`` channels and,
    for i > 0, starts with a stride-2 block whose shortcut is a 1x1 projection. Then global
    average pooling and Dense(num_classes). BatchNorm layers carry running statistics
    through the state convention (init with ``return_state=True``; see netcl.stax).
    """
    num_classes = positive_int(num_classes, "num_classes", "resnet")
    width = positive_int(width, "width", "resnet")
    stages = tuple(stages)
    if not stages:
        raise ValueError("resnet: stages must have at least one entry")
    for n in stages:
        positive_int(n, "each entry of stages", "resnet")
    layers = [Conv(width, (3, 3), padding="SAME"), BatchNorm(), Relu]
    channels = width
    for i, n in enumerate(stages):
        for j in range(n):
            down = i > 0 and j == 0
            layers.append(basic_block(channels, strides=2 if down else 1, project=down))
        channels *= 2
    layers += [GlobalAvgPool, Dense(num_classes)]
    return serial(*layers)
