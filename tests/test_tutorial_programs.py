"""Published PyTorch programs, copied as they are (loop counts cut to stay fast), run twice: with
real torch and with ``import clgrad as torch``; the numbers each prints must agree.

The two libraries draw different random numbers for the same seed (by design), so the harness
hands both runs the same draws: every ``rand``/``randn``/``randint``/``uniform_``/``normal_`` (nn's
weight init included) takes its numbers from one NumPy generator seeded alike for both runs, and
Python's ``random`` is seeded alike. The programs' text is not touched; ``DEVICE`` in the
environment of a program (``TUTORIAL_DEVICE``) picks cl:0 for the runs on OpenCL.
"""

import contextlib
import importlib
import io
import math
import pkgutil
import random
import re
import sys
import types

import numpy as np
import pytest

import clgrad
import clgrad.ops.creation as creation

torch = pytest.importorskip("torch")


@contextlib.contextmanager
def patched(*replacements):
    """Sets each (owner, name, value) of ``replacements`` for the block, then puts the
    originals back."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replacements]
    for owner, name, value in replacements:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


@contextlib.contextmanager
def same_random_numbers(lib, seed=0):
    """Both libraries' random draws, from one NumPy generator: uniform [0, 1), normal, and
    randint's 32-bit words (an integer in [low, high) is low + the word modulo the span)."""
    rng = np.random.default_rng(seed)
    random.seed(seed)
    if lib is clgrad:

        def _random(kind, size, dtype, device, generator, requires_grad):
            shape = creation._shape(size)
            draw = rng.standard_normal(shape) if kind == "normal" else rng.random(shape)
            dt = dtype or clgrad.get_default_dtype()
            return creation.tensor(draw, dtype=dt, device=device, requires_grad=requires_grad)

        def _random_bits(n, device, generator):
            words = rng.integers(0, 2**32, n, dtype=np.int64)
            return creation.tensor(words, dtype=clgrad.int64, device=device)

        with patched((creation, "_random", _random), (creation, "_random_bits", _random_bits)):
            yield
        return

    def _size(args, kw):
        size = kw.pop("size", args)
        return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size

    def _made(values, kw):
        return torch.tensor(
            values,
            dtype=kw.get("dtype") or torch.get_default_dtype(),
            device=kw.get("device"),
            requires_grad=kw.get("requires_grad", False),
        )

    def rand(*args, **kw):
        return _made(rng.random(_size(args, kw)), kw)

    def randn(*args, **kw):
        return _made(rng.standard_normal(_size(args, kw)), kw)

    def randint(low, high=None, size=None, **kw):
        if size is None:
            low, high, size = 0, low, high
        elif high is None:  # randint(high, size=...)
            low, high = 0, low
        words = rng.integers(0, 2**32, int(np.prod(size)), dtype=np.int64)
        values = torch.tensor(words % (high - low) + low, dtype=kw.get("dtype") or torch.int64)
        return values.reshape(tuple(size))

    def uniform_(self, a=0.0, b=1.0, generator=None):
        with torch.no_grad():
            return self.copy_(torch.tensor(rng.random(tuple(self.shape))) * (b - a) + a)

    def normal_(self, mean=0.0, std=1.0, generator=None):
        with torch.no_grad():
            return self.copy_(torch.tensor(rng.standard_normal(tuple(self.shape))) * std + mean)

    with patched(
        (torch, "rand", rand),
        (torch, "randn", randn),
        (torch, "randint", randint),
        (torch.Tensor, "uniform_", uniform_),
        (torch.Tensor, "normal_", normal_),
    ):
        yield


def import_all_of_clgrad():
    """Every clgrad module, imported: ``run_program`` maps ``torch.<path>`` to ``clgrad.<path>``
    for the modules loaded, and a program's ``from torch.utils.data.dataset import
    random_split`` must not reach torch's own module, left loaded by the torch run."""
    for info in pkgutil.walk_packages(clgrad.__path__, prefix="clgrad."):
        if info.name != "clgrad.__main__":
            importlib.import_module(info.name)


def run_program(source, lib, device="cpu", tmp_path=None):
    """Runs ``source`` as a module whose ``import torch`` gives ``lib``; returns what it printed."""
    name = "tutorial_program"
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module  # classes it defines must pickle (torch.save(model))
    saved = {k: m for k, m in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    out = io.StringIO()
    old_cwd = None
    # a program's set_default_device (the lectures' device under test) ends with it
    default_device = lib.get_default_device()
    try:
        if lib is clgrad:
            # `import torch`, `from torch import nn`, `import torch.nn.functional as F`
            import_all_of_clgrad()
            sys.modules["torch"] = clgrad
            for k in list(sys.modules):
                if k.startswith("clgrad."):
                    sys.modules["torch." + k[len("clgrad.") :]] = sys.modules[k]
        if tmp_path is not None:
            import os

            old_cwd = os.getcwd()
            os.chdir(tmp_path)
        with same_random_numbers(lib), contextlib.redirect_stdout(out):
            code = compile(source.replace("DEVICE", repr(device)), f"<{name}>", "exec")
            exec(code, module.__dict__)
    finally:
        if lib.get_default_device() != default_device:
            # None, not cpu: torch's set_default_device(cpu) leaves a device mode on, which
            # slows every op that follows
            lib.set_default_device(None if default_device.type == "cpu" else default_device)
        # put torch's own modules back; a torch module first imported by the program stays
        # (importing one twice would initialise its C extension twice)
        for k in list(sys.modules):
            if k in saved:
                sys.modules[k] = saved[k]
            elif (k == "torch" or k.startswith("torch.")) and getattr(
                sys.modules[k], "__name__", ""
            ).startswith("clgrad"):
                del sys.modules[k]
        sys.modules.pop(name, None)
        if old_cwd is not None:
            import os

            os.chdir(old_cwd)
    return out.getvalue()


# a sign of either kind: "%+f" of a value that is 0 up to rounding prints +0.000000 or -0.000000
NUMBER = re.compile(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?")


def assert_same_output(got, want, rtol=1e-3, atol=1e-4):
    """The two printouts hold the same text and numbers (within tolerance)."""
    assert NUMBER.sub("#", got) == NUMBER.sub("#", want), f"clgrad printed\n{got}\ntorch\n{want}"
    a = [float(v) for v in NUMBER.findall(got)]
    b = [float(v) for v in NUMBER.findall(want)]
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def compare(source, device="cpu", tmp_path=None, **tol):
    want = run_program(source, torch, "cpu", tmp_path)
    got = run_program(source, clgrad, device, tmp_path)
    assert want.strip(), "the program printed nothing"
    assert_same_output(got, want, **tol)
    return got


# ---- "Learning PyTorch with Examples" (pytorch/tutorials, beginner_source/examples_*) --------
POLYNOMIAL_TENSOR = """
import torch
import math


dtype = torch.float
device = torch.device(DEVICE)
# device = torch.device("cuda:0") # Uncomment this to run on GPU

# Create random input and output data
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Randomly initialize weights
a = torch.randn((), device=device, dtype=dtype)
b = torch.randn((), device=device, dtype=dtype)
c = torch.randn((), device=device, dtype=dtype)
d = torch.randn((), device=device, dtype=dtype)

learning_rate = 1e-6
for t in range(50):
    # Forward pass: compute predicted y
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum().item()
    if t % 10 == 9:
        print(t, loss)

    # Backprop to compute gradients of a, b, c, d with respect to loss
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    # Update weights using gradient descent
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d


print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
"""

POLYNOMIAL_AUTOGRAD = """
import torch
import math

# We want to be able to train our model on an `accelerator <https://pytorch.org/docs/stable/torch.html#accelerators>`__
# such as CUDA, MPS, MTIA, or XPU. If the current accelerator is available, we will use it. Otherwise, we use the CPU.

dtype = torch.float
device = DEVICE
print(f"Using {device} device")
torch.set_default_device(device)

# Create Tensors to hold input and outputs.
# By default, requires_grad=False, which indicates that we do not need to
# compute gradients with respect to these Tensors during the backward pass.
x = torch.linspace(-1, 1, 2000, dtype=dtype)
y = torch.exp(x) # A Taylor expansion would be 1 + x + (1/2) x**2 + (1/3!) x**3 + ...

# Create random Tensors for weights. For a third order polynomial, we need
# 4 weights: y = a + b x + c x^2 + d x^3
# Setting requires_grad=True indicates that we want to compute gradients with
# respect to these Tensors during the backward pass.
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

initial_loss = 1.
learning_rate = 1e-5
for t in range(50):
    # Forward pass: compute predicted y using operations on Tensors.
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss using operations on Tensors.
    # Now loss is a Tensor of shape (1,)
    # loss.item() gets the scalar value held in the loss.
    loss = (y_pred - y).pow(2).sum()

    # Calculare initial loss, so we can report loss relative to it
    if t==0:
        initial_loss=loss.item()

    if t % 10 == 9:
        print(f'Iteration t = {t:4d}  loss(t)/loss(0) = {round(loss.item()/initial_loss, 6):10.6f}  a = {a.item():10.6f}  b = {b.item():10.6f}  c = {c.item():10.6f}  d = {d.item():10.6f}')

    # Use autograd to compute the backward pass. This call will compute the
    # gradient of loss with respect to all Tensors with requires_grad=True.
    # After this call a.grad, b.grad. c.grad and d.grad will be Tensors holding
    # the gradient of the loss with respect to a, b, c, d respectively.
    loss.backward()

    # Manually update weights using gradient descent. Wrap in torch.no_grad()
    # because weights have requires_grad=True, but we don't need to track this
    # in autograd.
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
torch.set_default_device("cpu")
"""

LEGENDRE = """
import torch
import math


class LegendrePolynomial3(torch.autograd.Function):
    \"\"\"
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    \"\"\"

    @staticmethod
    def forward(ctx, input):
        \"\"\"
        In the forward pass we receive a Tensor containing the input and return
        a Tensor containing the output. ctx is a context object that can be used
        to stash information for backward computation. You can cache tensors for
        use in the backward pass using the ``ctx.save_for_backward`` method. Other
        objects can be stored directly as attributes on the ctx object, such as
        ``ctx.my_object = my_object``. Check out `Extending torch.autograd <https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd>`_
        for further details.
        \"\"\"
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        \"\"\"
        In the backward pass we receive a Tensor containing the gradient of the loss
        with respect to the output, and we need to compute the gradient of the loss
        with respect to the input.
        \"\"\"
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device(DEVICE)
# device = torch.device("cuda:0")  # Uncomment this to run on GPU

# Create Tensors to hold input and outputs.
# By default, requires_grad=False, which indicates that we do not need to
# compute gradients with respect to these Tensors during the backward pass.
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Create random Tensors for weights. For this example, we need
# 4 weights: y = a + b * P3(c + d * x), these weights need to be initialized
# not too far from the correct result to ensure convergence.
# Setting requires_grad=True indicates that we want to compute gradients with
# respect to these Tensors during the backward pass.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(50):
    # To apply our Function, we use Function.apply method. We alias this as 'P3'.
    P3 = LegendrePolynomial3.apply

    # Forward pass: compute predicted y using operations; we compute
    # P3 using our custom autograd operation.
    y_pred = a + b * P3(c + d * x)

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 9:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
"""

POLYNOMIAL_NN = """
import torch
import math


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# For this example, the output y is a linear function of (x, x^2, x^3), so
# we can consider it as a linear layer neural network. Let's prepare the
# tensor (x, x^2, x^3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# In the above code, x.unsqueeze(-1) has shape (2000, 1), and p has shape
# (3,), for this case, broadcasting semantics will apply to obtain a tensor
# of shape (2000, 3)

# Use the nn package to define our model as a sequence of layers. nn.Sequential
# is a Module which contains other Modules, and applies them in sequence to
# produce its output. The Linear Module computes output from input using a
# linear function, and holds internal Tensors for its weight and bias.
# The Flatten layer flatens the output of the linear layer to a 1D tensor,
# to match the shape of `y`.
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)

# The nn package also contains definitions of popular loss functions; in this
# case we will use Mean Squared Error (MSE) as our loss function.
loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-6
for t in range(50):

    # Forward pass: compute predicted y by passing x to the model. Module objects
    # override the __call__ operator so you can call them like functions. When
    # doing so you pass a Tensor of input data to the Module and it produces
    # a Tensor of output data.
    y_pred = model(xx)

    # Compute and print loss. We pass Tensors containing the predicted and true
    # values of y, and the loss function returns a Tensor containing the
    # loss.
    loss = loss_fn(y_pred, y)
    if t % 10 == 9:
        print(t, loss.item())

    # Zero the gradients before running the backward pass.
    model.zero_grad()

    # Backward pass: compute gradient of the loss with respect to all the learnable
    # parameters of the model. Internally, the parameters of each Module are stored
    # in Tensors with requires_grad=True, so this call will compute gradients for
    # all learnable parameters in the model.
    loss.backward()

    # Update the weights using gradient descent. Each parameter is a Tensor, so
    # we can access its gradients like we did before.
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

# You can access the first layer of `model` like accessing the first item of a list
linear_layer = model[0]

# For linear layer, its parameters are stored as `weight` and `bias`.
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
"""

POLYNOMIAL_OPTIM = """
import torch
import math


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# Prepare the input tensor (x, x^2, x^3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# Use the nn package to define our model and loss function.
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
loss_fn = torch.nn.MSELoss(reduction='sum')

# Use the optim package to define an Optimizer that will update the weights of
# the model for us. Here we will use RMSprop; the optim package contains many other
# optimization algorithms. The first argument to the RMSprop constructor tells the
# optimizer which Tensors it should update.
learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(50):
    # Forward pass: compute predicted y by passing x to the model.
    y_pred = model(xx)

    # Compute and print loss.
    loss = loss_fn(y_pred, y)
    if t % 10 == 9:
        print(t, loss.item())

    # Before the backward pass, use the optimizer object to zero all of the
    # gradients for the variables it will update (which are the learnable
    # weights of the model). This is because by default, gradients are
    # accumulated in buffers( i.e, not overwritten) whenever .backward()
    # is called. Checkout docs of torch.autograd.backward for more details.
    optimizer.zero_grad()

    # Backward pass: compute gradient of the loss with respect to model
    # parameters
    loss.backward()

    # Calling the step function on an Optimizer makes an update to its
    # parameters
    optimizer.step()


linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
"""

POLYNOMIAL_MODULE = """
import torch
import math


class Polynomial3(torch.nn.Module):
    def __init__(self):
        \"\"\"
        In the constructor we instantiate four parameters and assign them as
        member parameters.
        \"\"\"
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        \"\"\"
        In the forward function we accept a Tensor of input data and we must return
        a Tensor of output data. We can use Modules defined in the constructor as
        well as arbitrary operators on Tensors.
        \"\"\"
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        \"\"\"
        Just like any class in Python, you can also define custom method on PyTorch modules
        \"\"\"
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# Construct our model by instantiating the class defined above
model = Polynomial3()

# Construct our loss function and an Optimizer. The call to model.parameters()
# in the SGD constructor will contain the learnable parameters (defined
# with torch.nn.Parameter) which are members of the model.
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(50):
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 10 == 9:
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
"""

DYNAMIC_NET = """
import random
import torch
import math


class DynamicNet(torch.nn.Module):
    def __init__(self):
        \"\"\"
        In the constructor we instantiate five parameters and assign them as members.
        \"\"\"
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        \"\"\"
        For the forward pass of the model, we randomly choose either 4, 5
        and reuse the e parameter to compute the contribution of these orders.

        Since each forward pass builds a dynamic computation graph, we can use normal
        Python control-flow operators like loops or conditional statements when
        defining the forward pass of the model.

        Here we also see that it is perfectly safe to reuse the same parameter many
        times when defining a computational graph.
        \"\"\"
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        \"\"\"
        Just like any class in Python, you can also define custom method on PyTorch modules
        \"\"\"
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# Construct our model by instantiating the class defined above
model = DynamicNet()

# Construct our loss function and an Optimizer. Training this strange model with
# vanilla stochastic gradient descent is tough, so we use momentum
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(50):
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 10 == 9:
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
"""

# ---- micrograd's test/test_engine.py (karpathy/micrograd), the torch halves ------------------
MICROGRAD = """
import torch

def test_sanity_check():

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    print(ypt.data.item(), xpt.grad.item())

def test_more_ops():

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    print(gpt.data.item(), apt.grad.item(), bpt.grad.item())

test_sanity_check()
test_more_ops()
"""

# ---- the basics tutorials: "Optimizing Model Parameters" and "Save and Load the Model" --------
# FashionMNIST replaced by a small synthetic dataset of the same shapes (nothing downloaded).
OPTIMIZATION = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = DEVICE
g = torch.Generator().manual_seed(0)
training_data = TensorDataset(torch.rand(256, 1, 28, 28), torch.randint(0, 10, (256,)))
test_data = TensorDataset(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,)))

train_dataloader = DataLoader(training_data, batch_size=64)
test_dataloader = DataLoader(test_data, batch_size=64)

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork().to(device)

learning_rate = 1e-3
batch_size = 64
epochs = 2

# Initialize the loss function
loss_fn = nn.CrossEntropyLoss()

optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 2 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
    # also serves to reduce unnecessary gradient computations for tensors with requires_grad=True
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n")

for t in range(epochs):
    print(f"Epoch {t+1}\\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
"""

SAVE_LOAD = """
import torch
from torch import nn

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))

model = NeuralNetwork()
torch.save(model.state_dict(), 'model_weights.pth')

model = NeuralNetwork() # we do not specify ``weights`` (pretrained weights differ only in values)
model.load_state_dict(torch.load('model_weights.pth', weights_only=True))
model.eval()

x = torch.rand(2, 1, 28, 28)
print(model(x).sum().item())

torch.save(model, 'model.pth')
try:
    torch.load('model.pth')
except Exception as e:
    print(type(e).__name__, "weights_only" in str(e))
model = torch.load('model.pth', weights_only=False)
print(type(model).__name__, model(x).sum().item())

optimizer = torch.optim.Adam(model.parameters())
model(x).sum().backward()
optimizer.step()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, "ckpt.pth")
ckpt = torch.load("ckpt.pth", map_location="cpu")
print(ckpt["epoch"], sorted(ckpt["optimizer"]["param_groups"][0]), len(ckpt["optimizer"]["state"]))
"""

PROGRAMS = {
    "polynomial_tensor": POLYNOMIAL_TENSOR,
    "polynomial_autograd": POLYNOMIAL_AUTOGRAD,
    "polynomial_custom_function": LEGENDRE,
    "polynomial_nn": POLYNOMIAL_NN,
    "polynomial_optim": POLYNOMIAL_OPTIM,
    "polynomial_module": POLYNOMIAL_MODULE,
    "dynamic_net": DYNAMIC_NET,
    "micrograd": MICROGRAD,
    "optimization": OPTIMIZATION,
    "save_and_load": SAVE_LOAD,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_on_cpu(name, tmp_path):
    compare(PROGRAMS[name], "cpu", tmp_path)


@pytest.mark.parametrize(
    "name", ["polynomial_tensor", "polynomial_custom_function", "optimization"]
)
def test_program_on_opencl(name, tmp_path, cl_device):
    compare(PROGRAMS[name], cl_device, tmp_path)


def test_harness_feeds_both_libraries_the_same_numbers():
    with same_random_numbers(clgrad):
        a = clgrad.nn.Linear(3, 2).weight.detach().numpy()
    with same_random_numbers(torch):
        b = torch.nn.Linear(3, 2).weight.detach().numpy()
    np.testing.assert_allclose(a, b, rtol=1e-6)
    assert math.isfinite(float(a.sum()))
