"""Probe batch B: weakrefs read in forward, RNN modules."""

import weakref

import torch
from differential.runner import case, register
from torch import nn

STRICT_BREADTH = True


def seq(r):
    return (r.randn(3, 5, 8),)


class Child(nn.Module):
    def __init__(self, parent):
        super().__init__()
        self._parent = weakref.ref(parent)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        p = self._parent()
        if p is None:
            return self.fc(x)
        return self.fc(x) * p.scale + p.bias


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.bias = nn.Parameter(torch.ones(8))
        self.children_ = [Child(self)]
        self.child = self.children_[0]

    def forward(self, x):
        return self.child(x).sum(1)


register("b_weakref_parent_module", Parent, seq, module=True)

CACHE = {}


class Dead:
    pass


_dead = weakref.ref(Dead())
_alive_obj = Dead()
_alive_obj.k = 3
_alive = weakref.ref(_alive_obj)


@case(seq)
def weakref_global_dead_and_alive(x):
    a = _dead()
    b = _alive()
    return x * (0 if a is None else 1) + b.k


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):
        h0 = torch.zeros(4, 3, 6)
        c0 = torch.ones(4, 3, 6)
        out, (h, c) = self.lstm(x, (h0, c0))
        return out[:, -1], h.sum(0), c


register("b_lstm_bidir_two_layers", Lstm, seq, module=True)


class GruTrain(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 6, batch_first=True)
        self.head = nn.Linear(6, 2)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, x):
        self.opt.zero_grad()
        out, _ = self.gru(x)
        loss = self.head(out[:, -1]).pow(2).mean()
        loss.backward()
        self.opt.step()
        return loss.detach()


register("b_gru_train_step", GruTrain, seq, module=True)


class RnnCells(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(8, 6)
        self.rnn = nn.RNN(8, 6, nonlinearity="relu")

    def forward(self, x):
        h = torch.zeros(3, 6)
        c = torch.zeros(3, 6)
        for t in range(x.size(1)):
            h, c = self.cell(x[:, t], (h, c))
        o, hn = self.rnn(x.transpose(0, 1))
        return h, c, o, hn


register("b_lstm_cell_loop_and_rnn", RnnCells, seq, module=True)


class LstmEvalNoGrad(Lstm):
    def forward(self, x):
        with torch.no_grad():
            return super().forward(x)


def _evl(m, seed):
    m.eval()


register("b_lstm_eval_no_grad", LstmEvalNoGrad, seq, module=True, prepare=_evl)
