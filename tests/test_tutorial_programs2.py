# ruff: noqa: E501  (the programs are kept as published, long lines and all)
"""More published PyTorch programs (pytorch/tutorials and pytorch/examples, on synthetic data,
loop counts cut), run with torch and with ``import clgrad as torch``; the printouts must agree.

The harness is tests/test_tutorial_programs.py's, with more of torch's random draws fed from
the shared NumPy numbers: ``multinomial`` (Categorical.sample), ``randperm`` (random_split's, and the shuffling
DataLoader's sampler, whose pass draws as clgrad's does), ``bernoulli``, ``normal`` (Normal.sample),
``randn_like`` and ``rand_like``, each drawn with clgrad's own method, so both runs sample the same values. A
shape prints ``clgrad.Size`` under clgrad; the library name is compared as ``torch``.
"""

import collections
import contextlib
import math
import re
import sys
from collections.abc import Sequence

import numpy as np
import pytest
import test_tutorial_programs as base

import clgrad

torch = pytest.importorskip("torch")


@contextlib.contextmanager
def more_random_numbers(lib, seed=0):
    """``base.same_random_numbers`` plus torch's sampling functions drawn from those numbers
    with clgrad's algorithms (inverse CDF for ``multinomial`` with replacement, exponential
    races without, argsort of uniforms for ``randperm``, ``u < p`` for ``bernoulli``)."""
    with _same_random_numbers(lib, seed):
        if lib is clgrad:
            yield
            return
        from torch.utils.data import RandomSampler

        def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
            w = input.detach().double().reshape(-1, input.shape[-1]).numpy()
            rows, k = w.shape
            if replacement:
                u = torch.rand(rows, num_samples, dtype=torch.float64).numpy()
                cdf = np.cumsum(w, axis=1)
                cdf /= cdf[:, -1:]
                o = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
                o = np.minimum(o, k - 1)
            else:
                u = torch.rand(rows, k, dtype=torch.float64).numpy()
                with np.errstate(divide="ignore"):
                    keys = -np.log(np.maximum(u, 1e-300)) / w
                o = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
            return torch.tensor(o.reshape(*input.shape[:-1], num_samples), dtype=torch.int64)

        def randperm(n, *, dtype=None, device=None, generator=None, **kw):
            keys = torch.rand(n, dtype=torch.float32).numpy()
            return torch.tensor(np.argsort(keys, kind="stable"), dtype=dtype or torch.int64)

        def bernoulli(input, p=None, *, generator=None):
            u = torch.rand(input.shape, dtype=torch.float32)
            return (u < (input if p is None else p)).to(input.dtype)

        def bernoulli_(self, p=0.5, *, generator=None):
            with torch.no_grad():
                return self.copy_((torch.rand(self.shape) < p).to(self.dtype))

        def normal(mean=0.0, std=1.0, size=None, *, generator=None, **kw):
            tensors = [t for t in (mean, std) if isinstance(t, torch.Tensor)]
            if not tensors:
                # d2l's torch.normal(0, 0.01, size=(2, 1), requires_grad=True): a leaf
                requires_grad = kw.pop("requires_grad", False)
                return (torch.randn(size, **kw) * std + mean).requires_grad_(requires_grad)
            shape = torch.broadcast_shapes(*(t.shape for t in tensors))
            return (torch.randn(shape, dtype=tensors[0].dtype) * std + mean).detach()

        def randn_like(t, **kw):
            return torch.randn(t.shape, dtype=kw.get("dtype") or t.dtype)

        def rand_like(t, **kw):
            return torch.rand(t.shape, dtype=kw.get("dtype") or t.dtype)

        def sampler_iter(self):
            # torch's pass seeds a private generator and draws one more randperm at its end;
            # here it draws from the shared numbers as clgrad's sampler does
            n = len(self.data_source)
            for start in range(0, self.num_samples, 32 if self.replacement else n):
                size = min(32, self.num_samples - start)
                if self.replacement:
                    yield from torch.randint(0, n, (size,)).tolist()
                else:
                    yield from torch.randperm(n).tolist()[: self.num_samples - start]

        samplers = {
            "multinomial": multinomial,
            "randperm": randperm,
            "bernoulli": bernoulli,
            "randn_like": randn_like,
            "rand_like": rand_like,
            "normal": normal,
        }
        split_module = sys.modules["torch.utils.data.dataset"]  # random_split's own randperm
        with base.patched(
            *((torch, name, fn) for name, fn in samplers.items()),
            (torch.Tensor, "multinomial", multinomial),
            (torch.Tensor, "bernoulli", bernoulli),
            (torch.Tensor, "bernoulli_", bernoulli_),
            (RandomSampler, "__iter__", sampler_iter),
            (split_module, "randperm", randperm),
        ):
            yield


_same_random_numbers = base.same_random_numbers


def compare(source, device="cpu", tmp_path=None, rtol=1e-3, atol=1e-4, normalize=None):
    """Runs ``source`` with torch on cpu and clgrad on ``device``; the printouts must agree
    (after ``normalize(text, device)`` of each, where given)."""
    with _draws_shared():
        want = base.run_program(source, torch, "cpu", tmp_path)
        got = base.run_program(source, clgrad, device, tmp_path)
    assert want.strip(), "the program printed nothing"
    got = got.replace("clgrad.", "torch.")
    if normalize is not None:
        got, want = normalize(got, device), normalize(want, device)
    base.assert_same_output(got, want, rtol=rtol, atol=atol)


@contextlib.contextmanager
def _draws_shared():
    base.same_random_numbers = more_random_numbers
    try:
        yield
    finally:
        base.same_random_numbers = _same_random_numbers


CHAR_RNN_CLASSIFIER = """
import torch
import torch.nn as nn
import string
import random

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
category_lines = {"English": ["Abbott", "Adams", "Baker", "Smith", "Jones"],
                  "French": ["Abel", "Bernard", "Dubois", "Moreau", "Laurent"],
                  "Italian": ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi"]}
all_categories = list(category_lines)
n_categories = len(all_categories)

def letterToIndex(letter):
    return all_letters.find(letter)

def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor

def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor

print(letterToTensor('J'))
print(lineToTensor('Jones').size())

# one-hot via scatter and index_fill
idx = torch.tensor([letterToIndex(c) for c in "Jones"])
oh = torch.zeros(5, n_letters).scatter_(1, idx.unsqueeze(1), 1.0)
print(torch.equal(oh, lineToTensor("Jones").squeeze(1)))
oh2 = torch.zeros(n_letters).index_fill(0, idx, 1.0)
print(oh2.sum().item(), oh2.nonzero().flatten().tolist())

class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        hidden = torch.tanh(self.i2h(input) + self.h2h(hidden))
        output = self.h2o(hidden)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)

n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
input = letterToTensor('A')
hidden = torch.zeros(1, n_hidden)
output, next_hidden = rnn(input, hidden)
print(output)

def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i
print(categoryFromOutput(output))

criterion = nn.NLLLoss()
learning_rate = 0.005

def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()

for it in range(30):
    category = all_categories[it % 3]
    line = category_lines[category][(it // 3) % 5]
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    output, loss = train(category_tensor, lineToTensor(line))
    if it % 10 == 9:
        print(it, round(loss, 4), categoryFromOutput(output))

# nn.RNN version, batched
class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)
    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)
        return output
model = CharRNN(n_letters, 16, n_categories)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    total = 0.0
    for ci, cat in enumerate(all_categories):
        for line in category_lines[cat]:
            out = model(lineToTensor(line))
            loss = criterion(out, torch.tensor([ci]))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 3)
            opt.step(); opt.zero_grad()
            total += loss.item()
    print(epoch, total)
with torch.no_grad():
    out = model(lineToTensor("Rossi"))
    topv, topi = out.topk(3, 1, True)
    for i in range(3):
        print(topv[0][i].item(), all_categories[topi[0][i].item()])
# packed sequence batch
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
lines = ["Abel", "Smith", "Bo"]
seqs = [lineToTensor(l).squeeze(1) for l in lines]
lengths = torch.tensor([len(l) for l in lines])
padded = pad_sequence(seqs)
packed = pack_padded_sequence(padded, lengths, enforce_sorted=False)
out, h = model.rnn(packed)
unpacked, lens = pad_packed_sequence(out)
print(unpacked.shape, lens.tolist(), h.shape, h.sum().item())
"""

REINFORCE_ACTOR_CRITIC = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical
import numpy as np

torch.manual_seed(543)
class Env:
    def __init__(self):
        self.state = np.zeros(4, dtype=np.float32); self.t = 0
    def reset(self):
        self.t = 0; self.state = np.array([0.1, -0.2, 0.05, 0.0], dtype=np.float32)
        return self.state, {}
    def step(self, action):
        self.t += 1
        self.state = (self.state * 0.9 + (0.1 if action else -0.1)).astype(np.float32)
        reward = 1.0 - abs(float(self.state[0]))
        return self.state, reward, self.t >= 12, False, {}
env = Env()

class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []
    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)

policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()

def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()

def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()

running_reward = 10
for i_episode in range(5):
    state, _ = env.reset()
    ep_reward = 0
    actions = []
    for t in range(1, 10000):
        action = select_action(state)
        actions.append(action)
        state, reward, done, _, _ = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    l = finish_episode()
    print(i_episode, actions, round(ep_reward, 4), round(running_reward, 4), l)

# actor critic
from collections import namedtuple
SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
class AC(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 64)
        self.action_head = nn.Linear(64, 2)
        self.value_head = nn.Linear(64, 1)
        self.saved_actions = []; self.rewards = []
    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values
model = AC()
optimizer = optim.Adam(model.parameters(), lr=3e-2)
for ep in range(3):
    state, _ = env.reset()
    for t in range(12):
        s = torch.from_numpy(state).float()
        probs, state_value = model(s)
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        state, reward, done, _, _ = env.step(action.item())
        model.rewards.append(reward)
        ent = m.entropy()
    R = 0; saved_actions = model.saved_actions; policy_losses = []; value_losses = []; returns = []
    for r in model.rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]; del model.saved_actions[:]
    print(ep, loss.item(), ent.item())
d = Categorical(logits=torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]]))
print(d.probs, d.entropy(), d.log_prob(torch.tensor([1, 2])), d.sample((4,)).shape, d.batch_shape, d.event_shape)
print(d.sample().shape, d.sample((2, 3)).shape)
"""

VAE = """
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

device = torch.device(DEVICE)
torch.manual_seed(1)
train = torch.utils.data.TensorDataset(torch.rand(64, 1, 28, 28), torch.zeros(64))
train_loader = torch.utils.data.DataLoader(train, batch_size=16, shuffle=True)

class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)
    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)
    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = torch.randn_like(std)
        return mu + eps*std
    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))
    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar

model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)

def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD

for epoch in range(1, 3):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))
model.eval()
with torch.no_grad():
    data = train.tensors[0][:8].to(device)
    recon_batch, mu, logvar = model(data)
    n = min(data.size(0), 8)
    comparison = torch.cat([data[:n], recon_batch.view(16 // 2, 1, 28, 28)[:n]])
    print(comparison.shape, round(comparison.sum().item(), 2))
    sample = torch.randn(64, 20).to(device)
    sample = model.decode(sample).cpu()
    print(sample.view(64, 1, 28, 28).mean().item())
# BCE with logits and weights
x = torch.rand(4, 5); t = (torch.rand(4, 5) > 0.5).float()
print(F.binary_cross_entropy_with_logits(x, t, pos_weight=torch.ones(5) * 2).item())
print(nn.BCELoss(weight=torch.rand(5))(torch.sigmoid(x), t).item())
print(F.binary_cross_entropy(torch.sigmoid(x), t, reduction='none').sum(1))
# distributions based KL
from torch.distributions import Normal, kl_divergence, Independent
q = Normal(mu, (0.5 * logvar).exp())
p = Normal(torch.zeros_like(mu), torch.ones_like(mu))
print(kl_divergence(q, p).sum().item(), q.rsample().shape, Independent(q, 1).log_prob(mu).shape)
"""

STYLE_TRANSFER_LBFGS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import copy

device = torch.device(DEVICE)
torch.set_default_device(device); torch.set_default_dtype(torch.float64)
content_img = torch.rand(1, 3, 32, 32)
style_img = torch.rand(1, 3, 32, 32)

class ContentLoss(nn.Module):
    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        self.target = target.detach()
    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input

def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)

class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()
    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input

cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1)).eval()
cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406])
cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225])

class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)
    def forward(self, img):
        return (img - self.mean) / self.std

content_layers_default = ['conv_4']
style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4']

def get_style_model_and_losses(cnn, normalization_mean, normalization_std, style_img, content_img,
                               content_layers=content_layers_default, style_layers=style_layers_default):
    normalization = Normalization(normalization_mean, normalization_std)
    content_losses = []
    style_losses = []
    model = nn.Sequential(normalization)
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = 'pool_{}'.format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = 'bn_{}'.format(i)
        else:
            raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break
    model = model[:(i + 1)]
    return model, style_losses, content_losses

input_img = content_img.clone()

def get_input_optimizer(input_img):
    optimizer = optim.LBFGS([input_img])
    return optimizer

def run_style_transfer(cnn, normalization_mean, normalization_std, content_img, style_img, input_img, num_steps=6,
                       style_weight=1000000, content_weight=1):
    model, style_losses, content_losses = get_style_model_and_losses(cnn,
        normalization_mean, normalization_std, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = get_input_optimizer(input_img)
    run = [0]
    while run[0] <= num_steps:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0
            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss
            style_score *= style_weight
            content_score *= content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            if run[0] % 3 == 0:
                print("run {}:".format(run))
                print('Style Loss : {:4f} Content Loss: {:4f}'.format(style_score.item(), content_score.item()))
            return style_score + content_score
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img

output = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std, content_img, style_img, input_img)
print(output.sum().item())
print(len(optimizer.state) if (optimizer := None) else 0)
torch.set_default_device("cpu"); torch.set_default_dtype(torch.float32)
"""

LBFGS_OPTIONS = """
import torch
torch.set_default_dtype(torch.float64)
A = torch.randn(6, 6)
A = A @ A.t() + torch.eye(6)
b = torch.randn(6)
for kw in ({}, {"history_size": 3, "max_iter": 7}, {"line_search_fn": "strong_wolfe"}, {"lr": 0.5, "max_iter": 4}):
    x = torch.zeros(6, requires_grad=True)
    y = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.LBFGS([x, y], **kw)
    calls = [0]
    def closure():
        opt.zero_grad()
        loss = 0.5 * x @ A @ x - b @ x + ((y - 2) ** 4).sum() + (x[:2] * y).sum() ** 2
        loss.backward()
        calls[0] += 1
        return loss
    for step in range(3):
        l = opt.step(closure)
        print(kw, step, calls[0], l.item(), x.detach().sum().item(), y.detach().tolist())
    st = opt.state[opt._params[0]]
    print(sorted(st), st["func_evals"], st["n_iter"], len(st["old_dirs"]), float(st["t"]))
# rosenbrock
x = torch.tensor([-1.5, 2.0], requires_grad=True)
opt = torch.optim.LBFGS([x], lr=1, max_iter=50, line_search_fn="strong_wolfe", tolerance_grad=1e-9, tolerance_change=1e-12)
def closure():
    opt.zero_grad()
    loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    loss.backward()
    return loss
for i in range(3):
    print(opt.step(closure).item(), x.tolist(), opt.state[x]["func_evals"], opt.state[x]["n_iter"])
torch.set_default_dtype(torch.float32)
"""

NGRAM_EMBEDDINGS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

CONTEXT_SIZE = 2
EMBEDDING_DIM = 10
test_sentence = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:""".split()
ngrams = [([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i])
          for i in range(CONTEXT_SIZE, len(test_sentence))]
print(ngrams[:3])
vocab = sorted(set(test_sentence))
word_to_ix = {word: i for i, word in enumerate(vocab)}

class NGramLanguageModeler(nn.Module):
    def __init__(self, vocab_size, embedding_dim, context_size):
        super(NGramLanguageModeler, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)
    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        log_probs = F.log_softmax(out, dim=1)
        return log_probs

losses = []
loss_function = nn.NLLLoss()
model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
optimizer = optim.SGD(model.parameters(), lr=0.001)
for epoch in range(3):
    total_loss = 0
    for context, target in ngrams:
        context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
        model.zero_grad()
        log_probs = model(context_idxs)
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    losses.append(total_loss)
print(losses)
print(model.embeddings.weight[word_to_ix["beauty's"]])

# CBOW + sparse embedding + SparseAdam + EmbeddingBag
class CBOW(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.emb = nn.Embedding(n, d, sparse=False, max_norm=None, padding_idx=0)
        self.bag = nn.EmbeddingBag(n, d, mode="mean")
        self.out = nn.Linear(d, n)
    def forward(self, ctx, offsets):
        return F.log_softmax(self.out(self.emb(ctx).mean(1) + self.bag(ctx.flatten(), offsets)), -1)
m = CBOW(len(vocab), 8)
opt_sparse = optim.Adam(list(m.emb.parameters()), lr=0.01)
opt_dense = optim.Adam(list(m.bag.parameters()) + list(m.out.parameters()), lr=0.01)
data = [([word_to_ix[test_sentence[i - 2]], word_to_ix[test_sentence[i - 1]], word_to_ix[test_sentence[i + 1]], word_to_ix[test_sentence[i + 2]]], word_to_ix[test_sentence[i]]) for i in range(2, len(test_sentence) - 2)]
ctx = torch.tensor([d[0] for d in data]); tgt = torch.tensor([d[1] for d in data])
offsets = torch.arange(0, ctx.numel(), 4)
for epoch in range(5):
    opt_sparse.zero_grad(); opt_dense.zero_grad()
    loss = F.nll_loss(m(ctx, offsets), tgt)
    loss.backward()
    if epoch == 0:
        g = m.emb.weight.grad
        print(g.is_sparse, g.abs().sum().item())
    opt_sparse.step(); opt_dense.step()
    print(epoch, loss.item())
print(m.emb.weight[0].abs().sum().item())
e = nn.Embedding(5, 3, max_norm=1.0)
idx = torch.tensor([1, 2, 2, 4])
out = e(idx)
print(out.norm(dim=1), e.weight.norm(dim=1))
pre = nn.Embedding.from_pretrained(torch.arange(12.).view(4, 3), freeze=False, padding_idx=1)
pre(torch.tensor([0, 1, 3])).sum().backward()
print(pre.weight.grad)
print(F.one_hot(torch.tensor([0, 3, 2]), 5), F.one_hot(torch.tensor([[1], [2]])).shape)
print(F.cosine_similarity(model.embeddings.weight[:3], model.embeddings.weight[3:6]).shape)
'''

TRANSFORMER_LM = """
import math
import torch
from torch import nn, Tensor
from torch.nn import TransformerEncoder, TransformerEncoderLayer

device = torch.device(DEVICE)
class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)
    def forward(self, x: Tensor) -> Tensor:
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)

class TransformerModel(nn.Module):
    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int, nlayers: int, dropout: float = 0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()
    def init_weights(self) -> None:
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)
    def forward(self, src: Tensor, src_mask: Tensor = None) -> Tensor:
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(device)
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output

train_data = torch.randint(0, 50, (400,))
def batchify(data: Tensor, bsz: int) -> Tensor:
    seq_len = data.size(0) // bsz
    data = data[:seq_len * bsz]
    data = data.view(bsz, seq_len).t().contiguous()
    return data.to(device)
batch_size = 8
train_data = batchify(train_data, batch_size)
print(train_data.shape)
bptt = 10
def get_batch(source: Tensor, i: int):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].reshape(-1)
    return data, target

ntokens = 50
model = TransformerModel(ntokens, 32, 2, 64, 2, 0.0).to(device)
criterion = nn.CrossEntropyLoss()
lr = 5.0
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
mask = nn.Transformer.generate_square_subsequent_mask(bptt)
print(mask)
for epoch in range(2):
    model.train()
    total_loss = 0.
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        output = model(data)
        output_flat = output.view(-1, ntokens)
        loss = criterion(output_flat, targets)
        optimizer.zero_grad()
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total_loss += loss.item()
    lr = scheduler.get_last_lr()[0]
    print(f'| epoch {epoch:3d} | lr {lr:02.2f} | loss {total_loss:5.4f} | ppl {math.exp(total_loss / (batch + 1)):8.3f} | gn {gn.item():.4f}')
    scheduler.step()
model.eval()
with torch.no_grad():
    data, targets = get_batch(train_data, 0)
    out = model(data)
    print(criterion(out.view(-1, ntokens), targets).item())
    out2 = model(data, mask.to(device))
    print(torch.allclose(out, out2, atol=1e-5))
print(scheduler.state_dict())
best = model.state_dict()
print(list(best)[:4], best['pos_encoder.pe'].shape)
"""

PER_SAMPLE_GRADS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad, jacrev, hessian

device = DEVICE
class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output

def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)

batch_size = 8
data = torch.randn(batch_size, 1, 8, 8, device=device)
targets = torch.randint(10, (batch_size,), device=device)
model = SimpleCNN().to(device=device)

def compute_grad(sample, target):
    sample = sample.unsqueeze(0)
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))

def compute_sample_grads(data, targets):
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads

per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[1].shape)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}
def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss
ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print({k: (tuple(v.shape), round(v.sum().item(), 4)) for k, v in ft_per_sample_grads.items()})
# model ensembling
from torch.func import stack_module_state
import copy
models = [nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)).to(device) for _ in range(4)]
params, buffers = stack_module_state(models)
base_model = copy.deepcopy(models[0]).to('meta')
def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))
minibatch = torch.randn(6, 5, device=device)
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
predictions2 = [m(minibatch) for m in models]
print(predictions2_vmap.shape, torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-6))
# jacobians / hessians
def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()
D = 4
weight = torch.randn(D, D, device=device); bias = torch.randn(D, device=device); x = torch.randn(D, device=device)
jac = jacrev(predict, argnums=2)(weight, bias, x)
print(jac.shape, round(jac.sum().item(), 4))
jw, jb = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(jw.shape, jb.shape)
hess = hessian(lambda x: predict(weight, bias, x).sum())(x)
print(hess.shape, round(hess.sum().item(), 4))
bx = torch.randn(3, D, device=device)
print(vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, bx).shape)
from torch.func import jvp, vjp
_, jvp_out = jvp(lambda x: predict(weight, bias, x), (x,), (torch.ones_like(x),))
_, vjp_fn = vjp(lambda x: predict(weight, bias, x), x)
print(round(jvp_out.sum().item(), 4), round(vjp_fn(torch.ones(D, device=device))[0].sum().item(), 4))
"""

FORWARD_FORWARD = """
import torch
import torch.nn as nn
from torch.optim import Adam

def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_

class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1])]
    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)
    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)

class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0
        self.num_epochs = 12
    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))
    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % 10 == 0:
                print(i, loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()

torch.manual_seed(1234)
x = torch.rand(64, 784); y = torch.randint(0, 10, (64,))
net = Net([784, 100, 100])
x_pos = overlay_y_on_x(x, y)
rnd = torch.randperm(x.size(0))
x_neg = overlay_y_on_x(x, y[rnd])
print(rnd[:5])
net.train(x_pos, x_neg)
print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
"""

SIAMESE_LOSSES = """
import torch
import torch.nn as nn
import torch.nn.functional as F
device = torch.device(DEVICE)
class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((2, 2)))
        self.fc = nn.Sequential(nn.Linear(32 * 2, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
        self.sigmoid = nn.Sigmoid()
        self.cnn.apply(self.init_weights); self.fc.apply(self.init_weights)
    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)
    def forward_once(self, x):
        output = self.cnn(x)
        output = output.view(output.size()[0], -1)
        return output
    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        output = self.sigmoid(output)
        return output
model = SiameseNetwork().to(device)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
criterion = nn.BCELoss()
a = torch.rand(16, 1, 10, 10).to(device); b = torch.rand(16, 1, 10, 10).to(device); t = (torch.rand(16) > 0.5).float().to(device)
for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    outputs = model(a, b).squeeze()
    loss = criterion(outputs, t)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(epoch, loss.item(), scheduler.get_last_lr())
model.eval()
with torch.no_grad():
    out = model(a, b).squeeze()
    pred = torch.where(out > 0.5, 1, 0)
    print(pred.eq(t.view_as(pred)).sum().item(), out.sum().item())
# triplet / cosine embedding / contrastive
emb = nn.Sequential(nn.Flatten(), nn.Linear(100, 32), nn.ReLU(), nn.Linear(32, 8)).to(device)
opt = torch.optim.SGD(emb.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
triplet = nn.TripletMarginLoss(margin=1.0, p=2)
tdist = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.5, swap=True)
cos = nn.CosineEmbeddingLoss(margin=0.2)
hinge = nn.HingeEmbeddingLoss(margin=1.0)
mrl = nn.MarginRankingLoss(margin=0.1)
c = torch.rand(16, 1, 10, 10).to(device)
y = (torch.rand(16) > 0.5).float().to(device) * 2 - 1
for step in range(4):
    opt.zero_grad()
    ea, ep, en = emb(a), emb(b), emb(c)
    l1 = triplet(ea, ep, en)
    l2 = tdist(ea, ep, en)
    l3 = cos(ea, ep, y)
    d = F.pairwise_distance(ea, ep)
    l4 = hinge(d, y)
    l5 = mrl(ea.norm(dim=1), en.norm(dim=1), y)
    l6 = F.triplet_margin_loss(ea, ep, en, margin=0.5, p=1, swap=True, reduction='sum')
    euclidean_distance = F.pairwise_distance(ea, ep, keepdim=True)
    l7 = torch.mean((1 - (y > 0).float().unsqueeze(1)) * torch.pow(euclidean_distance, 2) + (y > 0).float().unsqueeze(1) * torch.pow(torch.clamp(2.0 - euclidean_distance, min=0.0), 2))
    loss = l1 + l2 + l3 + l4 + l5 + 0.01 * l6 + l7
    loss.backward()
    opt.step()
    print(step, [round(v.item(), 5) for v in (l1, l2, l3, l4, l5, l6, l7)])
print(F.cosine_similarity(ea[:1], ep).shape, torch.cdist(ea, en).shape, torch.cdist(ea, en).sum().item())
"""

TIME_SEQUENCE = """
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
torch.set_default_dtype(torch.float64)
np.random.seed(2)
T = 20; L = 40; N = 6
x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')

class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 16)
        self.lstm2 = nn.LSTMCell(16, 16)
        self.linear = nn.Linear(16, 1)
    def forward(self, input, future = 0):
        outputs = []
        h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs

np.random.seed(0)
torch.manual_seed(0)
input = torch.from_numpy(data[3:, :-1])
target = torch.from_numpy(data[3:, 1:])
test_input = torch.from_numpy(data[:3, :-1])
test_target = torch.from_numpy(data[:3, 1:])
seq = Sequence()
seq.double()
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=3)
for i in range(2):
    print('STEP: ', i)
    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        print('loss:', loss.item())
        loss.backward()
        return loss
    optimizer.step(closure)
    with torch.no_grad():
        future = 10
        pred = seq(test_input, future=future)
        loss = criterion(pred[:, :-future], test_target)
        print('test loss:', loss.item())
        y = pred.detach().numpy()
    print(y.shape, y[:, -1])
torch.set_default_dtype(torch.float32)
"""

WORD_LANGUAGE_MODEL = """
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
device = torch.device(DEVICE)
class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers
    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)
    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden
    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)

def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)
bptt = 7
def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target

ntokens = 30
corpus = torch.randint(0, ntokens, (120,))
train_data = batchify(corpus, 4)
criterion = nn.NLLLoss()
for rnn_type in ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]:
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, dropout=0.0, tie_weights=True).to(device)
    print(rnn_type, sum(p.numel() for p in model.parameters()), model.decoder.weight is model.encoder.weight)
    lr = 2.0
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(4)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    print(rnn_type, round(total_loss / (batch + 1), 5), math.exp(total_loss / (batch + 1)))
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)
        words = []
        for i in range(8):
            output, hidden = model(input, hidden)
            word_weights = output.squeeze().div(1.0).exp().cpu()
            word_idx = torch.multinomial(word_weights, 1)[0]
            input.fill_(word_idx)
            words.append(word_idx.item())
        print(words)
"""

SUPER_RESOLUTION = """
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
device = torch.device(DEVICE)
class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()
    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x
    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)
model = Net(upscale_factor=3).to(device)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)
lr_img = torch.rand(4, 1, 8, 8).to(device); hr_img = torch.rand(4, 1, 24, 24).to(device)
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(lr_img), hr_img)
    loss.backward()
    optimizer.step()
    print("===> Epoch {} Complete: Avg. Loss: {:.6f}".format(epoch, loss.item()))
with torch.no_grad():
    mse = criterion(model(lr_img), hr_img)
    psnr = 10 * torch.log10(1 / mse)
print("===> Avg. PSNR: {:.4f} dB".format(psnr.item()))
x = torch.arange(2 * 8 * 3 * 3.).view(2, 8, 3, 3).to(device)
ps = nn.PixelShuffle(2); pu = nn.PixelUnshuffle(2)
print(ps(x).shape, torch.equal(pu(ps(x)), x), ps(x)[0, 0, :2, :4].cpu())
print(torch.nn.functional.pixel_shuffle(x.view(1, 16, 3, 3), 4).shape, torch.pixel_unshuffle(torch.rand(1, 1, 4, 6), 2).shape)
print((model.conv1.weight.flatten(1) @ model.conv1.weight.flatten(1).t()).diagonal().sum().item())
"""

FAST_NEURAL_STYLE = """
import torch
import torch.nn as nn
device = torch.device(DEVICE)
class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(16, affine=True)
        self.res1 = ResidualBlock(16)
        self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv3 = ConvLayer(8, 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()
    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res1(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.deconv3(y)
        return y
class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)
    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out
class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()
    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out
class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)
    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out
def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram
def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std
transformer = TransformerNet().to(device)
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
mse_loss = torch.nn.MSELoss()
x = (torch.rand(2, 3, 16, 16) * 255).to(device)
style = torch.rand(1, 3, 16, 16).to(device)
gram_style = [gram_matrix(style.repeat(2, 1, 1, 1))]
for e in range(3):
    optimizer.zero_grad()
    y = transformer(x)
    y = normalize_batch(y)
    xn = normalize_batch(x.clone())
    content_loss = 1e5 * mse_loss(y, xn)
    style_loss = 1e10 * mse_loss(gram_matrix(y), gram_style[0][:y.size(0), :, :])
    total_loss = content_loss + style_loss
    total_loss.backward()
    optimizer.step()
    print(e, content_loss.item(), style_loss.item())
transformer.eval()
with torch.no_grad():
    output = transformer(x).clamp(0, 255)
    print(output.shape, output.mean().item())
u = torch.rand(1, 2, 3, 5).to(device)
for mode, kw in (("nearest", {}), ("bilinear", {"align_corners": False}), ("bilinear", {"align_corners": True}), ("bicubic", {"align_corners": False}), ("nearest-exact", {})):
    print(mode, nn.Upsample(scale_factor=2, mode=mode, **kw)(u).sum().item(), nn.functional.interpolate(u, size=(4, 7), mode=mode, **kw).sum().item())
print(nn.ReflectionPad2d((1, 2, 0, 2))(u).shape, nn.ReplicationPad2d(2)(u).sum().item(), nn.ZeroPad2d(1)(u).shape, nn.InstanceNorm2d(2)(u).std().item())
print(nn.InstanceNorm2d(2, track_running_stats=True).to(device).train()(u).sum().item(), nn.ReflectionPad1d(2)(u[0]).shape)
"""

LR_SCHEDULERS = """
import torch
from torch import nn, optim
from torch.optim import lr_scheduler
model = nn.Linear(3, 1)
def lrs(opt):
    return [round(g['lr'], 8) for g in opt.param_groups]
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=12)
out = []
for i in range(12):
    opt.step(); sched.step(); out.append(lrs(opt)[0])
print(out, opt.param_groups[0]['momentum'])
opt = optim.Adam(model.parameters(), lr=0.1)
sched = lr_scheduler.OneCycleLR(opt, max_lr=[0.3], epochs=2, steps_per_epoch=5, anneal_strategy='linear', three_phase=True, pct_start=0.4)
out = []
for i in range(10):
    opt.step(); sched.step(); out.append((lrs(opt)[0], round(opt.param_groups[0]['betas'][0], 6)))
print(out)
opt = optim.SGD(model.parameters(), lr=0.1)
sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
out = []
iters = 4
for epoch in range(4):
    for i in range(iters):
        opt.step()
        sched.step(epoch + i / iters)
        out.append(lrs(opt)[0])
print(out)
sched.step(); print(lrs(opt), sched.T_cur, sched.T_i, sched.last_epoch)
opt = optim.SGD(model.parameters(), lr=0.1)
s1 = lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
s2 = lr_scheduler.CosineAnnealingLR(opt, T_max=5)
seq = lr_scheduler.SequentialLR(opt, schedulers=[s1, s2], milestones=[3])
out = []
for i in range(9):
    opt.step(); seq.step(); out.append(lrs(opt)[0])
print(out, seq.get_last_lr())
opt = optim.SGD(model.parameters(), lr=0.1)
ch = lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2), lr_scheduler.ExponentialLR(opt, gamma=0.9)])
out = []
for i in range(5):
    opt.step(); ch.step(); out.append(lrs(opt)[0])
print(out)
opt = optim.SGD(model.parameters(), lr=0.1)
pl = lr_scheduler.ReduceLROnPlateau(opt, 'min', factor=0.5, patience=1, threshold=0.01, cooldown=1, min_lr=0.01)
out = []
for loss in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]:
    pl.step(loss); out.append(lrs(opt)[0])
print(out, pl.num_bad_epochs, pl.best)
opt = optim.SGD(model.parameters(), lr=0.1)
cyc = lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode='triangular2')
out = []
for i in range(10):
    opt.step(); cyc.step(); out.append(lrs(opt)[0])
print(out)
opt = optim.SGD([{'params': [model.weight]}, {'params': [model.bias], 'lr': 0.01}], lr=0.1)
lam = lr_scheduler.LambdaLR(opt, lr_lambda=[lambda e: 0.95 ** e, lambda e: 1 / (e + 1)])
ms = lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
for i in range(5):
    opt.step(); lam.step(); ms.step()
print(lrs(opt), ms.get_last_lr(), lam.last_epoch)
poly = lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
for i in range(3):
    opt.step(); poly.step()
print(lrs(opt))
sd = sched.state_dict(); print(sorted(sd))
"""

AUTOCAST_ACCUMULATION = """
import torch
import torch.nn as nn
device = DEVICE
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
scaler = torch.amp.GradScaler("cpu", enabled=False)
x = torch.randn(32, 16).to(device); y = torch.randint(0, 4, (32,)).to(device)
accum = 4
for epoch in range(2):
    for i in range(8):
        xb, yb = x[i * 4:(i + 1) * 4], y[i * 4:(i + 1) * 4]
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out = model(xb)
            loss = nn.functional.cross_entropy(out, yb)
            if i == 0 and epoch == 0:
                print(out.dtype, loss.dtype, model[2](model[1](model[0](xb))).dtype)
            loss = loss / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.unscale_(opt)
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt); scaler.update()
            opt.zero_grad(set_to_none=True)
            print(epoch, i, loss.item() * accum, gn.dtype)
print(model[0].weight.dtype, model[0].weight.grad)
with torch.autocast("cpu", dtype=torch.bfloat16):
    a = torch.randn(4, 4); b = torch.randn(4, 4)
    print(torch.mm(a, b).dtype, (a + b).dtype, torch.softmax(a, -1).dtype, a.sum().dtype, torch.matmul(a, b).float().sum().item() != 0)
    with torch.autocast("cpu", enabled=False):
        print(torch.mm(a, b).dtype)
print(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
"""

DATA_UTILITIES = """
import torch
from torch.utils.data import Dataset, DataLoader, random_split, WeightedRandomSampler, Subset, ConcatDataset, TensorDataset, SubsetRandomSampler
from torch.nn.utils.rnn import pad_sequence
class Seqs(Dataset):
    def __init__(self, n):
        self.data = [torch.arange(i % 5 + 1) + i for i in range(n)]
        self.labels = [i % 3 for i in range(n)]
    def __len__(self):
        return len(self.data)
    def __getitem__(self, idx):
        return {"x": self.data[idx], "y": self.labels[idx], "name": f"s{idx}"}
ds = Seqs(20)
gen = torch.Generator().manual_seed(42)
train, val = random_split(ds, [0.75, 0.25], generator=gen)
print(len(train), len(val), type(train).__name__)
print(sorted(train.indices) == sorted(set(train.indices)), len(set(train.indices) | set(val.indices)))
a, b, c = random_split(range(10), [3, 3, 4])
print(len(a), len(b), len(c), sorted(list(a) + list(b) + list(c)))
def collate_fn(batch):
    xs = [b["x"] for b in batch]
    lengths = torch.tensor([len(x) for x in xs])
    return pad_sequence(xs, batch_first=True, padding_value=-1), lengths, torch.tensor([b["y"] for b in batch]), [b["name"] for b in batch]
dl = DataLoader(ds, batch_size=6, shuffle=False, collate_fn=collate_fn, drop_last=True)
for x, l, y, names in dl:
    print(x.shape, l.tolist(), y.tolist(), names[:2], x[0].tolist())
print(len(dl))
default = DataLoader(ds, batch_size=4)
b = next(iter(DataLoader(Subset(ds, [0, 5, 10, 15]), batch_size=4, collate_fn=lambda b: b)))
print(len(b), b[0]["name"])
tds = TensorDataset(torch.arange(12.).view(6, 2), torch.arange(6))
batch = next(iter(DataLoader(tds, batch_size=3)))
print(batch)
dd = DataLoader([{"a": torch.tensor(1.0), "b": [1, 2], "c": (torch.zeros(2), "z")}, {"a": torch.tensor(2.0), "b": [3, 4], "c": (torch.ones(2), "w")}], batch_size=2)
print(next(iter(dd)))
weights = [0.1 if l == 0 else 1.0 for l in ds.labels]
sampler = WeightedRandomSampler(weights, num_samples=12, replacement=True)
idx = list(sampler)
print(len(idx), sum(ds.labels[i] == 0 for i in idx) <= 6)
w2 = WeightedRandomSampler(torch.tensor([0.0, 1.0, 0.0, 2.0]), 5, replacement=True)
print(sorted(set(w2)) in ([1, 3], [1], [3]), len(w2))
w3 = WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False)
print(sorted(w3))
cat = ConcatDataset([tds, tds])
print(len(cat), cat[7], cat.cumulative_sizes)
srs = SubsetRandomSampler([1, 3, 5])
print(sorted(srs), len(srs))
dl2 = DataLoader(tds, batch_size=4, sampler=srs)
print([b[1].sort().values.tolist() for b in dl2])
from torch.utils.data import default_collate, IterableDataset, get_worker_info
print(default_collate([(1, 2.0, "a"), (3, 4.0, "b")]))
class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        return iter(range(7))
print([b.tolist() for b in DataLoader(Stream(), batch_size=3)])
"""

EMA_AND_SWA = """
import copy
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn, get_ema_multi_avg_fn, get_ema_avg_fn
device = DEVICE
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1)).to(device)
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
swa_model = AveragedModel(model)
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
ema_model2 = AveragedModel(model, avg_fn=get_ema_avg_fn(0.8), use_buffers=True)
swa_scheduler = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="cos")
x = torch.randn(16, 4).to(device); y = torch.randn(16, 1).to(device)
loader = [(x[:8], y[:8]), (x[8:], y[8:])]
for epoch in range(4):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.lerp_(pm, 0.1)
            for be, bm in zip(ema.buffers(), model.buffers()):
                be.copy_(bm)
            decay = 0.9
            ema_state = ema.state_dict()
    if epoch >= 1:
        swa_model.update_parameters(model)
        ema_model.update_parameters(model)
        ema_model2.update_parameters(model)
        swa_scheduler.step()
    print(epoch, round(loss.item(), 5), [round(g["lr"], 6) for g in opt.param_groups])
print(swa_model.n_averaged.item(), ema_model.n_averaged, sorted(swa_model.state_dict())[:3])
update_bn(loader, swa_model, device=device)
with torch.no_grad():
    print(swa_model(x).sum().item(), ema_model(x).sum().item(), ema_model2(x).sum().item(), ema(x).sum().item())
    print(swa_model.module[1].running_mean.sum().item(), swa_model.module[1].num_batches_tracked.item())
a = torch.zeros(3); b = torch.tensor([1.0, 2.0, 4.0])
print(a.lerp(b, 0.25), torch.lerp(a, b, torch.tensor([0.0, 0.5, 1.0])), a.lerp_(b, 0.5))
with torch.no_grad():
    ps = [p.clone() for p in model.parameters()]
    torch._foreach_mul_(ps, 0.5)
    torch._foreach_add_(ps, list(model.parameters()), alpha=0.5)
    torch._foreach_lerp_(ps, list(model.parameters()), 0.3)
print(sum(p.sum().item() for p in ps))
"""

BILSTM_CRF = """
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim

def argmax(vec):
    _, idx = torch.max(vec, 1)
    return idx.item()
def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)
def log_sum_exp(vec):
    max_score = vec[0, argmax(vec)]
    max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
    return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))

class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
        super(BiLSTM_CRF, self).__init__()
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.vocab_size = vocab_size
        self.tag_to_ix = tag_to_ix
        self.tagset_size = len(tag_to_ix)
        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
        self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))
        self.transitions.data[tag_to_ix[START_TAG], :] = -10000
        self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
        self.hidden = self.init_hidden()
    def init_hidden(self):
        return (torch.randn(2, 1, self.hidden_dim // 2), torch.randn(2, 1, self.hidden_dim // 2))
    def _forward_alg(self, feats):
        init_alphas = torch.full((1, self.tagset_size), -10000.)
        init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
        forward_var = init_alphas
        for feat in feats:
            alphas_t = []
            for next_tag in range(self.tagset_size):
                emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                trans_score = self.transitions[next_tag].view(1, -1)
                next_tag_var = forward_var + trans_score + emit_score
                alphas_t.append(log_sum_exp(next_tag_var).view(1))
            forward_var = torch.cat(alphas_t).view(1, -1)
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        alpha = log_sum_exp(terminal_var)
        return alpha
    def _get_lstm_features(self, sentence):
        self.hidden = self.init_hidden()
        embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
        lstm_out, self.hidden = self.lstm(embeds, self.hidden)
        lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
        lstm_feats = self.hidden2tag(lstm_out)
        return lstm_feats
    def _score_sentence(self, feats, tags):
        score = torch.zeros(1)
        tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
        for i, feat in enumerate(feats):
            score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
        score = score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]
        return score
    def _viterbi_decode(self, feats):
        backpointers = []
        init_vvars = torch.full((1, self.tagset_size), -10000.)
        init_vvars[0][self.tag_to_ix[START_TAG]] = 0
        forward_var = init_vvars
        for feat in feats:
            bptrs_t = []
            viterbivars_t = []
            for next_tag in range(self.tagset_size):
                next_tag_var = forward_var + self.transitions[next_tag]
                best_tag_id = argmax(next_tag_var)
                bptrs_t.append(best_tag_id)
                viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
            forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
            backpointers.append(bptrs_t)
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        best_tag_id = argmax(terminal_var)
        path_score = terminal_var[0][best_tag_id]
        best_path = [best_tag_id]
        for bptrs_t in reversed(backpointers):
            best_tag_id = bptrs_t[best_tag_id]
            best_path.append(best_tag_id)
        start = best_path.pop()
        assert start == self.tag_to_ix[START_TAG]
        best_path.reverse()
        return path_score, best_path
    def neg_log_likelihood(self, sentence, tags):
        feats = self._get_lstm_features(sentence)
        forward_score = self._forward_alg(feats)
        gold_score = self._score_sentence(feats, tags)
        return forward_score - gold_score
    def forward(self, sentence):
        lstm_feats = self._get_lstm_features(sentence)
        score, tag_seq = self._viterbi_decode(lstm_feats)
        return score, tag_seq

START_TAG = "<START>"
STOP_TAG = "<STOP>"
EMBEDDING_DIM = 5
HIDDEN_DIM = 4
training_data = [("the wall street journal reported today that apple corporation made money".split(), "B I I I O O O B I O O".split()),
                 ("georgia tech is a university in georgia".split(), "B I O O O O B".split())]
word_to_ix = {}
for sentence, tags in training_data:
    for word in sentence:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
optimizer = optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
with torch.no_grad():
    precheck_sent = prepare_sequence(training_data[0][0], word_to_ix)
    precheck_tags = torch.tensor([tag_to_ix[t] for t in training_data[0][1]], dtype=torch.long)
    print(model(precheck_sent))
for epoch in range(3):
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)
        loss = model.neg_log_likelihood(sentence_in, targets)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
with torch.no_grad():
    precheck_sent = prepare_sequence(training_data[0][0], word_to_ix)
    print(model(precheck_sent))
"""


REGRESSION_AND_GCN = """
from itertools import count
import torch
import torch.nn.functional as F
POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5
def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)
def f(x):
    return x.mm(W_target) + b_target.item()
def poly_desc(W, b):
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result
def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y
fc = torch.nn.Linear(W_target.size(0), 1)
for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-3 or batch_idx >= 40:
        break
print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\\t' + poly_desc(fc.weight.view(-1), fc.bias))
print('==> Actual function:\\t' + poly_desc(W_target.view(-1), b_target))
# GCN with a sparse adjacency (pytorch/examples gcn)
import torch.nn as nn
class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)
    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        output = torch.spmm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output
class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.0):
        super(GCN, self).__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)
    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return F.log_softmax(x, dim=1)
n = 12
edges = torch.tensor([[i, (i + 1) % n] for i in range(n)] + [[i, (i + 3) % n] for i in range(n)]).t()
edges = torch.cat([edges, edges.flip(0), torch.arange(n).repeat(2, 1)], 1)
values = torch.ones(edges.shape[1])
deg = torch.zeros(n).index_add_(0, edges[0], values)
norm = deg[edges[0]].pow(-0.5) * deg[edges[1]].pow(-0.5)
adj = torch.sparse_coo_tensor(edges, norm, (n, n)).coalesce()
print(adj.is_sparse, adj._nnz(), adj.to_dense().sum().item())
features = torch.rand(n, 6); labels = torch.randint(0, 3, (n,))
model = GCN(6, 8, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
idx_train = torch.arange(8); idx_test = torch.arange(8, 12)
for epoch in range(4):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss = F.nll_loss(output[idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()
    acc = (output[idx_test].argmax(1) == labels[idx_test]).float().mean()
    print(epoch, loss.item(), acc.item())
print(torch.sparse.mm(adj, features).sum().item(), torch.sparse.sum(adj).item(), (adj @ features).shape)
dense = adj.to_dense()
print(torch.allclose(torch.mm(dense, features), torch.sparse.mm(adj, features), atol=1e-6))
"""


PARAMETRIZE_AND_PRUNE = """
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
import torch.nn.utils.prune as prune
import torch.nn.functional as F
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
print(torch.dist(A, A.T).item(), parametrize.is_parametrized(layer), type(layer).__name__)
print(layer.parametrizations.weight.original.shape, sorted(layer.state_dict()))
class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)
layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)
opt = torch.optim.SGD(layer_orthogonal.parameters(), lr=0.1)
x = torch.randn(5, 3)
for i in range(3):
    opt.zero_grad()
    loss = layer_orthogonal(x).pow(2).sum()
    loss.backward(); opt.step()
    print(i, loss.item())
with parametrize.cached():
    print(layer_orthogonal.weight.sum().item())
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print(type(layer.weight).__name__, parametrize.is_parametrized(layer))
ortho = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
print(torch.dist(ortho.weight.T @ ortho.weight, torch.eye(4)).item() < 1e-4)
wn = nn.utils.parametrizations.weight_norm(nn.Linear(4, 2))
print(sorted(n for n, _ in wn.named_parameters()), wn(torch.ones(1, 4)).shape)
sn = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))
sn(torch.ones(2, 4))
# pruning tutorial
class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
model = LeNet()
module = model.conv1
prune.random_unstructured(module, name="weight", amount=0.3)
print(list(module.named_buffers())[0][0], float(torch.sum(module.weight == 0)))
prune.l1_unstructured(module, name="bias", amount=3)
print(module.bias_mask, [n for n, _ in module.named_parameters()])
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print(len(module._forward_pre_hooks))
prune.remove(module, 'weight')
print([n for n, _ in module.named_parameters()])
new_model = LeNet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name='weight', amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name='weight', amount=0.4)
print(dict(new_model.named_buffers()).keys())
model = LeNet()
parameters_to_prune = ((model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'), (model.fc2, 'weight'), (model.fc3, 'weight'))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for m, _ in parameters_to_prune:
    print("Sparsity: {:.2f}%".format(100. * float(torch.sum(m.weight == 0)) / float(m.weight.nelement())))
print(model(torch.rand(2, 1, 28, 28)).sum().item())
"""


DQN = """
import math
import random
from collections import namedtuple, deque
from itertools import count
import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F
device = torch.device(DEVICE)
Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))
class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)
    def push(self, *args):
        self.memory.append(Transition(*args))
    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)
    def __len__(self):
        return len(self.memory)
class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 32)
        self.layer2 = nn.Linear(32, 32)
        self.layer3 = nn.Linear(32, n_actions)
    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)
BATCH_SIZE = 8
GAMMA = 0.99
EPS_START = 0.9
EPS_END = 0.01
EPS_DECAY = 50
TAU = 0.005
LR = 1e-3
n_actions = 2
n_observations = 4
policy_net = DQN(n_observations, n_actions).to(device)
target_net = DQN(n_observations, n_actions).to(device)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(1000)
steps_done = 0
def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor([[random.randrange(n_actions)]], device=device, dtype=torch.long)
def optimize_model():
    if len(memory) < BATCH_SIZE:
        return None
    transitions = memory.sample(BATCH_SIZE)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()
for i_episode in range(3):
    s = [0.01 * i_episode, 0.0, -0.02, 0.01]
    state = torch.tensor(s, dtype=torch.float32, device=device).unsqueeze(0)
    for t in count():
        action = select_action(state)
        s = [v * 0.95 + (0.05 if action.item() else -0.05) for v in s]
        reward = torch.tensor([1.0 - abs(s[0])], device=device)
        terminated = t >= 9 or abs(s[0]) > 0.3
        next_state = None if terminated else torch.tensor(s, dtype=torch.float32, device=device).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state
        l = optimize_model()
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key]*TAU + target_net_state_dict[key]*(1-TAU)
        target_net.load_state_dict(target_net_state_dict)
        if terminated:
            print(i_episode, t + 1, l)
            break
print(sum(p.sum().item() for p in target_net.parameters()), len(memory))
"""


KNOWLEDGE_DISTILLATION = """
import torch
import torch.nn as nn
import torch.nn.functional as F
device = DEVICE
class Teacher(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(), nn.Dropout(0.0), nn.Linear(32, num_classes))
    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)
class Student(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 16), nn.ReLU(), nn.Dropout(0.0), nn.Linear(16, num_classes))
    def forward(self, x):
        x = self.features(x)
        flattened_conv_output = torch.flatten(x, 1)
        x = self.classifier(flattened_conv_output)
        flattened_conv_output_after_pooling = torch.nn.functional.avg_pool1d(flattened_conv_output, 2)
        return x, flattened_conv_output_after_pooling
teacher = Teacher().to(device); student = Student().to(device)
x = torch.rand(8, 3, 16, 16).to(device); labels = torch.randint(0, 10, (8,)).to(device)
T = 2; soft_target_loss_weight = 0.25; ce_loss_weight = 0.75
ce_loss = nn.CrossEntropyLoss()
cosine_loss = nn.CosineEmbeddingLoss()
optimizer = torch.optim.Adam(student.parameters(), lr=0.001)
teacher.eval(); student.train()
feats = {}
def hook(module, inp, out):
    feats["teacher"] = out.detach()
h = teacher.features.register_forward_hook(hook)
grads = []
hb = student.classifier[0].register_full_backward_hook(lambda m, gi, go: grads.append(go[0].abs().sum().item()))
for epoch in range(3):
    optimizer.zero_grad()
    with torch.no_grad():
        teacher_logits = teacher(x)
    student_logits, student_hidden = student(x)
    soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
    soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
    soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
    kl = nn.KLDivLoss(reduction="batchmean")(soft_prob, soft_targets) * T ** 2
    kl_log = F.kl_div(soft_prob, soft_targets.log(), reduction="batchmean", log_target=True)
    label_loss = ce_loss(student_logits, labels)
    teacher_hidden = torch.nn.functional.avg_pool1d(torch.flatten(feats["teacher"], 1), 2)
    hidden_rep_loss = cosine_loss(student_hidden, teacher_hidden, target=torch.ones(x.size(0)).to(device))
    loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss + 0.1 * hidden_rep_loss
    loss.backward()
    optimizer.step()
    print(epoch, loss.item(), soft_targets_loss.item(), kl.item(), kl_log.item(), hidden_rep_loss.item())
h.remove(); hb.remove()
print(len(grads), grads[0] > 0, len(teacher.features._forward_hooks))
ls = nn.CrossEntropyLoss(label_smoothing=0.1)(student_logits, labels)
soft = nn.CrossEntropyLoss()(student_logits, soft_targets)
print(ls.item(), soft.item(), F.cross_entropy(student_logits, labels, reduction="none", ignore_index=3).sum().item())
"""


VISION_TRANSFORMER_SDPA = """
import torch
import torch.nn as nn
import torch.nn.functional as F
device = DEVICE
class PatchEmbed(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)
class Attention(nn.Module):
    def __init__(self, dim, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
    def forward(self, x, causal=False):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)
class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6); self.attn = Attention(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(approximate="tanh"), nn.Linear(dim * 2, dim))
    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))
class ViT(nn.Module):
    def __init__(self, num_classes=10, dim=32, depth=2):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, dim))
        nn.init.normal_(self.pos_embed, std=.02)  # trunc_normal_ in timm: torch 2.13 draws it by rejection, other numbers
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
    def forward(self, x):
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        x = self.blocks(x)
        x = self.norm(x)
        return self.head(x[:, 0])
model = ViT().to(device)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
decay, no_decay = [], []
for n, p in model.named_parameters():
    (no_decay if p.ndim <= 1 or n.endswith(".bias") or "token" in n or "pos_embed" in n else decay).append(p)
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-3, betas=(0.9, 0.95))
sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 3))
x = torch.rand(4, 3, 16, 16).to(device); y = torch.randint(0, 10, (4,)).to(device)
for step in range(4):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
    loss.backward()
    optimizer.step(); sched.step()
    print(step, loss.item(), sched.get_last_lr())
q = torch.rand(2, 2, 5, 8).to(device); k = torch.rand(2, 2, 7, 8).to(device); v = torch.rand(2, 2, 7, 8).to(device)
mask = torch.ones(5, 7, dtype=torch.bool).tril(diagonal=2).to(device)
print(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().item(), F.scaled_dot_product_attention(q, k, v, attn_mask=mask.float() * -1.0, scale=0.3).sum().item())
kg = torch.rand(2, 1, 7, 8).to(device); vg = torch.rand(2, 1, 7, 8).to(device)
print(F.scaled_dot_product_attention(q, kg, vg, enable_gqa=True).shape)
patches = x.unfold(2, 4, 4).unfold(3, 4, 4)
print(patches.shape, patches.contiguous().view(4, 3, -1, 16).permute(0, 2, 1, 3).flatten(2).shape)
print(F.unfold(x, kernel_size=4, stride=4).shape, F.fold(F.unfold(x, 4, stride=4), (16, 16), 4, stride=4).sub(x).abs().max().item())
"""


CUSTOM_FUNCTION_EXTENSIONS = """
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
import torch.func
class MyCube(Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)
    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result
    @staticmethod
    def vmap(info, in_dims, x):
        x_bdim, = in_dims
        x = x.movedim(x_bdim, 0)
        result = MyCube.apply(x)
        return result, (0, 0)
def my_cube(x):
    result, _ = MyCube.apply(x)
    return result
x = torch.randn(3, requires_grad=True)
print(torch.func.grad(lambda x: my_cube(x).sum())(x))
print(torch.func.grad(torch.func.grad(lambda x: my_cube(x)))(torch.tensor(1.5)))
print(torch.vmap(my_cube)(torch.arange(6.).view(2, 3)))
y = my_cube(x); gx, = torch.autograd.grad(y.sum(), x, create_graph=True); gx.sum().backward()
print(x.grad)
class MySort(Function):
    generate_vmap_rule = True
    @staticmethod
    def forward(x, dim):
        idx = x.argsort(dim)
        result = x.gather(dim, idx)
        return result, idx
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, idx = output
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.dim = dim
    @staticmethod
    def backward(ctx, grad_output, _0):
        idx, = ctx.saved_tensors
        return torch.zeros_like(grad_output).scatter_(ctx.dim, idx, grad_output), None
z = torch.tensor([[3., 1., 2.], [0., 5., 4.]], requires_grad=True)
r, idx = MySort.apply(z, 1)
(r * torch.arange(3.)).sum().backward()
print(r, idx.requires_grad, z.grad)
print(torch.vmap(lambda t: MySort.apply(t, 0)[0])(z.detach()))
class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result
a = torch.tensor([0.5, 1.0], requires_grad=True)
Exp.apply(a).sum().backward(); print(a.grad)
g, = torch.autograd.grad(Exp.apply(a).sum(), a, create_graph=True)
try:
    g.sum().backward()
except RuntimeError as e:
    print("RuntimeError", "once_differentiable" in str(e) or "double backward" in str(e) or "does not require grad" in str(e))
# saved tensors hooks
packed = []
def pack_hook(t):
    packed.append(tuple(t.shape))
    return t.clone()
def unpack_hook(t):
    return t
w = torch.randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    out = (w * w).sin().sum()
out.backward()
print(len(packed) > 0, w.grad.shape)
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    out2 = (w.exp() * w).sum()
out2.backward(); print(w.grad.sum().item())
# anomaly detection and gradcheck
from torch.autograd import gradcheck
inp = torch.randn(4, dtype=torch.double, requires_grad=True)
print(gradcheck(lambda t: Exp.apply(t), (inp,), eps=1e-6, atol=1e-4))
with torch.autograd.set_detect_anomaly(True):
    q = torch.tensor([1.0, 2.0], requires_grad=True)
    (q * 2).sum().backward()
print(q.grad, torch.is_anomaly_enabled())
# hooks on tensors
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)
(v ** 2).sum().backward(); print(v.grad); h.remove()
u = v * 3; u.retain_grad(); u.sum().backward(); print(u.grad, v.grad)
v.register_post_accumulate_grad_hook(lambda p: print("accumulated", p.grad))
(v * 1).sum().backward()
"""


COMPLEX_FFT_AND_MODULE_API = """
import torch
import torch.nn as nn
x = torch.randn(2, 3, dtype=torch.cfloat)
print(x.dtype, x.real.shape, torch.view_as_real(x).shape)
y = torch.tensor([[1 + 2j, 3 - 1j], [0.5j, -2]])
print(y.abs(), y.angle(), y.conj(), y @ y.mH, torch.linalg.eigvalsh(torch.tensor([[2., 1.], [1., 3.]])))
z = torch.randn(4, dtype=torch.cfloat, requires_grad=True)
loss = (z * z.conj()).real.sum()
loss.backward(); print(z.grad)
sig = torch.sin(torch.linspace(0, 8 * 3.14159265, 64)) + 0.5 * torch.cos(torch.linspace(0, 20 * 3.14159265, 64))
spec = torch.fft.rfft(sig)
print(spec.shape, spec.abs().argmax().item(), torch.fft.irfft(spec, n=64).sub(sig).abs().max().item() < 1e-5)
print(torch.fft.fftfreq(8), torch.fft.fftshift(torch.arange(6)))
st = torch.stft(sig, n_fft=16, hop_length=4, window=torch.hann_window(16), return_complex=True)
print(st.shape, st.abs().sum().item())
print(torch.istft(st, n_fft=16, hop_length=4, window=torch.hann_window(16), length=64).sub(sig).abs().max().item() < 1e-4)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.Linear(3, 4), "b": nn.Linear(4, 2)})
        self.extra = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(2))])
        self.pdict = nn.ParameterDict({"scale": nn.Parameter(torch.tensor(2.0))})
        self.register_buffer("running", torch.zeros(2))
        self.register_buffer("tmp", torch.ones(1), persistent=False)
        self.layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    def forward(self, x):
        x = self.layers[0](self.blocks["a"](x))
        x = self.layers[1](self.blocks["b"](x))
        return x * self.pdict["scale"] + self.extra[0] + self.extra[1]
net = Net()
print(sorted(net.state_dict()), [n for n, _ in net.named_modules()])
print(net.extra, net.pdict)
print(net)
sd = net.state_dict(); del sd["running"]; sd["bogus"] = torch.zeros(1)
res = net.load_state_dict(sd, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    net.load_state_dict(sd)
except RuntimeError as e:
    print(str(e).splitlines()[0])
def init(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1); nn.init.zeros_(m.bias)
net.apply(init)
print(net(torch.ones(2, 3)))
net.blocks["c"] = nn.Identity(); net.extra.append(nn.Parameter(torch.ones(1)))
print(len(list(net.parameters())), sum(p.numel() for p in net.parameters()), net.get_submodule("blocks.a"), net.get_parameter("pdict.scale").item())
net.requires_grad_(False); print(any(p.requires_grad for p in net.parameters()))
print(net.half().blocks.a.weight.dtype, net.float().running.dtype, net.double().extra[0].dtype)
print(nn.Sequential(nn.Linear(2, 2), nn.ReLU())[0:1], len(nn.Sequential(*[nn.Identity()] * 3)))
"""


SEQ2SEQ_TRANSLATION = """
import random
import torch
import torch.nn as nn
from torch import optim
import torch.nn.functional as F
device = torch.device(DEVICE)
SOS_token = 0
EOS_token = 1
MAX_LENGTH = 6
class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.0):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)
    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden
class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)
    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights
class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.0):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)
    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions
    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights
n_words_in, n_words_out, hidden_size, batch_size = 12, 10, 16, 4
pairs = [([random.randrange(2, n_words_in) for _ in range(random.randint(2, MAX_LENGTH - 1))], [random.randrange(2, n_words_out) for _ in range(random.randint(2, MAX_LENGTH - 1))]) for _ in range(8)]
import numpy as np
input_ids = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
target_ids = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
for idx, (inp, tgt) in enumerate(pairs):
    inp = inp + [EOS_token]; tgt = tgt + [EOS_token]
    input_ids[idx, :len(inp)] = inp
    target_ids[idx, :len(tgt)] = tgt
from torch.utils.data import TensorDataset, DataLoader, RandomSampler
train_data = TensorDataset(torch.LongTensor(input_ids).to(device), torch.LongTensor(target_ids).to(device))
train_sampler = RandomSampler(train_data)
train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=batch_size)
encoder = EncoderRNN(n_words_in, hidden_size).to(device)
decoder = AttnDecoderRNN(hidden_size, n_words_out).to(device)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(3):
    total_loss = 0
    for data in train_dataloader:
        input_tensor, target_tensor = data
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        total_loss += loss.item()
    print(epoch, total_loss / len(train_dataloader))
with torch.no_grad():
    input_tensor = torch.LongTensor(input_ids[:2]).to(device)
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
    _, topi = decoder_outputs.topk(1)
    decoded_ids = topi.squeeze()
    print(decoded_ids.tolist(), decoder_attn.shape, decoder_attn.sum(-1).mean().item())
"""


COMPILE_AND_RESUME = """
import torch
import torch.nn as nn
device = DEVICE
model = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 1)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
scaler = torch.amp.GradScaler(enabled=False)
cmodel = torch.compile(model, backend="eager")
x = torch.randn(32, 8).to(device); y = torch.randn(32, 1).to(device)
@torch.compile(backend="eager")
def loss_fn(pred, target):
    return torch.nn.functional.huber_loss(pred, target, delta=0.5)
for step in range(3):
    opt.zero_grad()
    loss = loss_fn(cmodel(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt); scaler.update(); sched.step()
    print(step, loss.item(), sched.get_last_lr()[0])
ckpt = {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "scaler": scaler.state_dict(), "step": 3}
torch.save(ckpt, "resume.pt")
model2 = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 1)).to(device)
opt2 = torch.optim.Adam(model2.parameters(), lr=1e-2)
sched2 = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
c = torch.load("resume.pt", map_location=device, weights_only=True)
model2.load_state_dict(c["model"]); opt2.load_state_dict(c["opt"]); sched2.load_state_dict(c["sched"])
print(c["step"], sched2.last_epoch, opt2.param_groups[0]["lr"], float(opt2.state_dict()["state"][0]["step"]))
for m, o, s in ((model, opt, sched), (model2, opt2, sched2)):
    o.zero_grad(); l = nn.functional.mse_loss(m(x), y); l.backward(); o.step(); s.step()
    print(l.item(), s.get_last_lr()[0])
print(all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters())))
print(torch._dynamo.is_compiling(), list(cmodel.state_dict())[:1])
"""


SAC_DISTRIBUTIONS_AND_OPTIMIZERS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, Independent, MultivariateNormal, TransformedDistribution, MixtureSameFamily, Categorical, kl_divergence
from torch.distributions.transforms import TanhTransform, AffineTransform, ComposeTransform
LOG_STD_MIN, LOG_STD_MAX = -5, 2
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 32); self.fc_mean = nn.Linear(32, 2); self.fc_logstd = nn.Linear(32, 2)
        self.register_buffer("action_scale", torch.tensor([2.0, 1.0]))
        self.register_buffer("action_bias", torch.tensor([0.0, 0.5]))
    def forward(self, x):
        x = F.relu(self.fc1(x))
        mean = self.fc_mean(x)
        log_std = torch.tanh(self.fc_logstd(x))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        return mean, log_std
    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean
actor = Actor()
log_alpha = torch.zeros(1, requires_grad=True)
a_opt = torch.optim.Adam([log_alpha], lr=1e-2)
opt = torch.optim.Adam(list(actor.parameters()), lr=3e-4)
obs = torch.randn(8, 3)
for it in range(3):
    action, log_pi, _ = actor.get_action(obs)
    alpha = log_alpha.exp().item()
    actor_loss = ((alpha * log_pi) - action.sum(1, keepdim=True)).mean()
    opt.zero_grad(); actor_loss.backward(); opt.step()
    with torch.no_grad():
        _, log_pi, _ = actor.get_action(obs)
    alpha_loss = (-log_alpha.exp() * (log_pi + -2.0)).mean()
    a_opt.zero_grad(); alpha_loss.backward(); a_opt.step()
    print(it, actor_loss.item(), alpha_loss.item(), log_alpha.item())
mean, log_std = actor(obs)
base = Independent(Normal(mean, log_std.exp()), 1)
squashed = TransformedDistribution(base, [TanhTransform(cache_size=1), AffineTransform(actor.action_bias, actor.action_scale)])
s = squashed.rsample()
print(s.shape, squashed.log_prob(s).shape, base.entropy().sum().item(), squashed.batch_shape, squashed.event_shape)
mvn = MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 0.0], [0.5, 0.8]]))
print(mvn.log_prob(torch.tensor([0.3, -0.2])).item(), mvn.entropy().item(), mvn.covariance_matrix, mvn.rsample((3,)).shape)
mix = MixtureSameFamily(Categorical(logits=torch.tensor([0.1, 0.5])), Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])))
print(mix.log_prob(torch.tensor([0.0, 1.5])), mix.mean.item(), mix.variance.item(), mix.sample((4,)).shape)
print(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0)).item(), kl_divergence(mvn, MultivariateNormal(torch.ones(2), torch.eye(2))).item())
model = nn.Linear(4, 2)
x = torch.randn(16, 4); y = torch.randn(16, 2)
for name, ctor in [("RMSprop", lambda p: torch.optim.RMSprop(p, lr=1e-2, centered=True, momentum=0.5, weight_decay=1e-3)),
                   ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
                   ("NAdam", lambda p: torch.optim.NAdam(p, lr=1e-2, decoupled_weight_decay=True, weight_decay=0.01)),
                   ("RAdam", lambda p: torch.optim.RAdam(p, lr=1e-2, decoupled_weight_decay=True, weight_decay=0.01)),
                   ("Adamax", lambda p: torch.optim.Adamax(p, lr=1e-2)),
                   ("ASGD", lambda p: torch.optim.ASGD(p, lr=1e-2, t0=1)),
                   ("Rprop", lambda p: torch.optim.Rprop(p, lr=1e-2)),
                   ("Adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.8)),
                   ("AdamW", lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, maximize=False)),
                   ("SGD", lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, dampening=0.1, nesterov=False))]:
    m = nn.Linear(4, 2)
    m.load_state_dict(model.state_dict())
    o = ctor([m.weight])
    o.add_param_group({"params": [m.bias], "lr": 5e-3})
    for i in range(4):
        o.zero_grad()
        l = F.mse_loss(m(x), y); l.backward(); o.step()
    sd = o.state_dict()
    print(name, l.item(), m.bias.detach().tolist(), sorted(sd["state"][0]), len(sd["param_groups"]))
"""


TEXT_CLASSIFICATION_EMBEDDING_BAG = """
import time
import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.dataset import random_split
device = torch.device(DEVICE)
vocab = {w: i for i, w in enumerate("<unk> the a stock market rose fell team won lost game new phone chip launched".split())}
def text_pipeline(x):
    return [vocab.get(w, 0) for w in x.lower().split()]
def label_pipeline(x):
    return int(x) - 1
train_iter = [(1, "the stock market rose"), (2, "the team won the game"), (3, "a new phone launched"), (1, "stock market fell"), (2, "team lost a game"), (3, "new chip launched"), (1, "the market rose again"), (2, "the game was won")] * 3
def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(label_pipeline(_label))
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list.to(device), text_list.to(device), offsets.to(device)
class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()
    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()
    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)
num_class = 3
model = TextClassificationModel(len(vocab), 8, num_class).to(device)
EPOCHS = 3
LR = 5
BATCH_SIZE = 4
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
train_dataset = list(train_iter)
num_train = int(len(train_dataset) * 0.75)
split_train_, split_valid_ = random_split(train_dataset, [num_train, len(train_dataset) - num_train])
train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True, collate_fn=collate_batch)
valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=False, collate_fn=collate_batch)
def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    return total_acc / total_count, loss.item()
def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count
total_accu = None
for epoch in range(1, EPOCHS + 1):
    acc, l = train(train_dataloader)
    accu_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    print("| end of epoch {:3d} | valid accuracy {:8.3f} | train {:.3f} loss {:.5f} lr {}".format(epoch, accu_val, acc, l, scheduler.get_last_lr()))
def predict(text, text_pipeline):
    with torch.no_grad():
        text = torch.tensor(text_pipeline(text)).to(device)
        output = model(text, torch.tensor([0]).to(device))
        return output.argmax(1).item() + 1
print(predict("the new phone chip", text_pipeline))
bag = nn.EmbeddingBag(5, 3, mode="max").to(device)
print(bag(torch.tensor([[1, 2], [3, 4]]).to(device)).shape, nn.EmbeddingBag(5, 3, mode="sum", padding_idx=0).to(device)(torch.tensor([0, 1, 2, 0]).to(device), torch.tensor([0, 2]).to(device), per_sample_weights=torch.tensor([1., 2., 3., 4.]).to(device)).sum().item())
"""


PROGRAMS = {
    name.lower(): value
    for name, value in dict(globals()).items()
    if name.isupper() and isinstance(value, str) and "import torch" in value
}
TOLERANCE = {"autocast_accumulation": {"rtol": 1e-2, "atol": 1e-3}}  # bfloat16 products


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_on_cpu(name, tmp_path):
    compare(PROGRAMS[name], "cpu", tmp_path, **TOLERANCE.get(name, {}))


@pytest.mark.parametrize(
    "name", ["forward_forward", "ema_and_swa", "super_resolution", "seq2seq_translation"]
)
def test_program_on_opencl(name, tmp_path, cl_device):
    compare(PROGRAMS[name], cl_device, tmp_path, **TOLERANCE.get(name, {}))


def test_harness_shares_sampling_draws():
    def draws(lib):
        with more_random_numbers(lib):
            probs = lib.tensor([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
            return (
                lib.multinomial(probs, 4, True).tolist(),
                lib.multinomial(probs, 2).tolist(),
                lib.randperm(6).tolist(),
                lib.distributions.Categorical(probs).sample((3,)).tolist(),
            )

    assert draws(clgrad) == draws(torch)


# ---- the failures these programs found, each on its own -------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        lambda x: (range(2),),
        lambda x: (range(3), [0, 2, 3]),
        lambda x: (slice(None), range(1, 4, 2)),
        lambda x: ([range(2), [1, 2]],),
        lambda x: (range(0),),
        lambda x: (__import__("collections").deque([0, 2]),),
    ],
)
def test_sequence_indices_as_lists(key, device):
    """forward_forward's ``x_[range(x.shape[0]), y] = x.max()``: a ``range`` (any sequence but
    a string) indexes as the list of its ints, read and written."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    k = key(None)
    want = torch.tensor(a)
    got = clgrad.tensor(a, device=device)
    index = k[0] if len(k) == 1 else k
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[index].cpu().numpy(), want[index].numpy())
        want[index] = -1.0
        got[index] = -1.0
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_sequence_index_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        clgrad.zeros(3)[range(5)]


def _foreach_calls(lib):
    """Each ``torch._foreach_*`` form the EMA and optimizer code calls, on lists of tensors."""
    xs = [lib.tensor([0.5, -1.5, 2.0]), lib.tensor([[0.25], [4.0]])]
    ys = [lib.tensor([1.0, 2.0, 3.0]), lib.tensor([[2.0], [-1.0]])]
    s = lib.tensor(2.0)
    out = {}
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max"):
        f = getattr(lib, f"_foreach_{op}")
        out[op] = [f(xs, 2.0), f(xs, [2.0, -1.0]), f(xs, ys)]
        if op in ("add", "sub", "mul", "div"):
            out[op].append(f(xs, s))
    out["alpha"] = [lib._foreach_add(xs, ys, alpha=0.5), lib._foreach_add(xs, s, alpha=3)]
    out["alpha"].append(lib._foreach_sub(xs, ys, alpha=2))
    for op in ("abs", "exp", "neg", "sqrt", "sign", "round", "sigmoid", "reciprocal", "frac"):
        out[op] = [getattr(lib, f"_foreach_{op}")([x.abs() + 0.5 for x in xs])]
    out["pow"] = [lib._foreach_pow(xs, 2), lib._foreach_pow(2.0, xs), lib._foreach_pow(xs, ys)]
    out["pow"].append(lib._foreach_pow(xs, s))
    out["lerp"] = [lib._foreach_lerp(xs, ys, 0.3), lib._foreach_lerp(xs, ys, [0.1, 0.9])]
    out["lerp_tensor"] = [lib._foreach_lerp(xs, ys, ys)]
    out["addcmul"] = [lib._foreach_addcmul(xs, ys, ys, 0.5)]
    out["addcdiv"] = [lib._foreach_addcdiv(xs, ys, ys, lib.tensor([1.0, 2.0]))]
    out["norm"] = [lib._foreach_norm(xs), lib._foreach_norm(xs, 1), lib._foreach_norm(xs, 0.5)]
    out["norm_inf"] = [lib._foreach_norm(xs, float("inf")), lib._foreach_max(xs)]
    out["clone"] = [lib._foreach_clone(xs)]
    # in place: the same list back, its tensors changed
    zs = [x.clone() for x in xs]
    assert lib._foreach_mul_(zs, 0.9) is zs
    lib._foreach_add_(zs, ys, alpha=0.1)
    lib._foreach_lerp_(zs, ys, 0.25)
    lib._foreach_addcmul_(zs, ys, ys, value=0.5)
    lib._foreach_sqrt_(lib._foreach_abs_(zs))
    lib._foreach_copy_(zs, lib._foreach_maximum(zs, 1.0))
    lib._foreach_clamp_max_(zs, [1.5, 1.2])
    out["in_place"] = [zs]
    lib._foreach_zero_(zs)
    out["zero"] = [zs]
    return out


def test_foreach_functions_as_torch(device):
    want = _foreach_calls(torch)
    with clgrad.device(device):
        got = _foreach_calls(clgrad)
    assert list(got) == list(want)
    for name in want:
        for g, w in zip(got[name], want[name]):
            assert type(g) is type(w), name
            assert len(g) == len(w)
            for a, b in zip(g, w):
                assert a.shape == tuple(b.shape), name
                np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-6, err_msg=name)


def _foreach_refusals(lib):
    a = [lib.ones(2), lib.zeros(3)]
    return [
        (lambda: lib._foreach_add(a, [lib.ones(2)]), RuntimeError, "same number of tensors"),
        (lambda: lib._foreach_add([], 1), RuntimeError, "at least one tensor"),
        (lambda: lib._foreach_add(a, [1.0]), RuntimeError, "same number of elements"),
        (lambda: lib._foreach_sub(a, 1, alpha=2), TypeError, "tuple of Tensors"),
        (lambda: lib._foreach_sub(a, lib.tensor(1.0), alpha=2), TypeError, "tuple of Tensors"),
        (lambda: lib._foreach_div_([lib.tensor([1, 2])], 2), RuntimeError, "can't be cast"),
    ]


def test_foreach_refusals_and_autograd_as_torch():
    for lib in (torch, clgrad):
        for call, error, message in _foreach_refusals(lib):
            with pytest.raises(error, match=message):
                call()
        w = [lib.tensor([1.0, 2.0], requires_grad=True)]
        with pytest.raises(RuntimeError, match="leaf Variable"):
            lib._foreach_mul_(w, 2.0)
        (y,) = lib._foreach_lerp(lib._foreach_mul(w, 3.0), [lib.ones(2)], 0.25)
        y.sum().backward()
        assert w[0].grad.tolist() == [2.25, 2.25]


LINSPACE_CASES = [
    (-1, 1, 7),
    (0, 1, 10),
    (-1, 1, 28),
    (-math.pi, math.pi, 2000),
    (2, -5.5, 100),
    (3, 3.0000001, 6),
    (-1e6, 1e-6, 1001),
    (-100, 2**40, 77),
    (1, 65519.0, 3),
    (-1e39, 1.0, 5),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int16"])
def test_linspace_values_are_torchs(dtype, device):
    """linspace's values bit for bit: ATen rounds ``start + step * i`` once (a fused
    multiply-add) in float32/float64, and rounds each operation in Half/BFloat16 arithmetic.
    The spatial transformer's identity affine grid put points an ulp either side of a pixel
    (torch.linspace(-1, 1, 7)[3] is -2.98e-08, not 0), which flips grid_sample's gradient."""
    if dtype == "float64" and not clgrad.device(device).supports_float64:
        pytest.skip("no float64 on this device")
    for start, end, steps in LINSPACE_CASES:
        try:
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).float().numpy()
        except RuntimeError as e:  # an end the dtype cannot hold: torch's error
            with pytest.raises(RuntimeError, match=re.escape(str(e))):
                clgrad.linspace(start, end, steps, dtype=getattr(clgrad, dtype), device=device)
            continue
        got = clgrad.linspace(start, end, steps, dtype=getattr(clgrad, dtype), device=device)
        np.testing.assert_array_equal(got.float().cpu().numpy(), want, err_msg=str((start, end)))


class _Point:
    def __init__(self, x):
        self.x = x


class _RowList(list):
    pass


class _Pair(Sequence):
    def __init__(self, *values):
        self.values = values

    def __getitem__(self, i):
        return self.values[i]

    def __len__(self):
        return len(self.values)


def _collated(lib):
    """default_collate over the containers torch copies (a defaultdict keeps its factory, a
    list subclass its type), its refusals, and a type added to ``default_collate_fn_map``."""
    from importlib import import_module

    data = import_module(lib.__name__ + ".utils.data")
    collate_module = import_module(lib.__name__ + ".utils.data._utils.collate")
    first, second = collections.defaultdict(list), collections.defaultdict(list)
    first["a"], second["a"] = 1, 2
    out = []
    batches = [
        [first, second],
        [collections.OrderedDict(b=1, a=2.0), collections.OrderedDict(b=3, a=4.0)],
        [_RowList([1, 2]), _RowList([3, 4])],
        [np.array(["a"]), np.array(["b"])],
        [None, None],
        [1 + 2j, 3j],
    ]
    for batch in batches:
        try:
            r = data.default_collate(batch)
            out.append((type(r).__name__, getattr(r, "default_factory", None), repr(r)))
        except TypeError as e:
            out.append(("TypeError", str(e)))
    pairs = data.default_collate([_Pair(1, 2.0), _Pair(3, 4.0)])
    out.append((type(pairs).__name__, repr(pairs.values)))

    def collate_points(batch, *, collate_fn_map=None):
        return lib.tensor([p.x for p in batch])

    fn_map = {_Point: collate_points, **collate_module.default_collate_fn_map}
    out.append(
        repr(collate_module.collate([(_Point(1), 2.0), (_Point(3), 4.0)], collate_fn_map=fn_map))
    )
    collate_module.default_collate_fn_map[_Point] = collate_points
    try:
        out.append(repr(data.default_collate([{"p": _Point(5)}, {"p": _Point(6)}])))
    finally:
        del collate_module.default_collate_fn_map[_Point]
    return [repr(o).replace("clgrad.", "torch.") for o in out]


def test_default_collate_is_torchs_collate_with_its_function_map():
    """pytorch's documented extension of default_collate (a type added to
    ``default_collate_fn_map``, or ``collate`` with a map of one's own) raised AttributeError;
    a defaultdict batch raised TypeError ('first argument must be callable'), a list subclass
    came back a list, and a string array's error was not torch's."""
    assert _collated(clgrad) == _collated(torch)
