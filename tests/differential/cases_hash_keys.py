"""Issue 14, ints that automatic dynamic makes symbolic (a length, a step, an id changing from
call to call) used where Python hashes them: dict keys built by ``dict(...)``, ``dict.update``,
``dict.fromkeys``, ``setdefault``, ``pop``, ``OrderedDict.move_to_end``, ``Counter``, set and
frozenset elements and set methods. Hashing needs the int's value, so torch.compile specializes
it (guards it to keep its value) instead of breaking the graph; torchferro must too. Each
program is called with 3, then 4: the second call recompiles with the int symbolic."""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict

import torch

from .runner import case

# Issue 14: more graphs than torch.compile fails unless the case names the gap (breadth=).
STRICT_BREADTH = True


def xn(r):
    return (r.randn(4), r.pick(3, 4))


@case(xn)
def int_key_in_dict_of_pairs(x, n):
    table = dict([(n, x * 2), (0, x)])
    return table[n] + table[0], list(table)


@case(xn)
def int_key_in_dict_of_zipped_lists(x, n):
    steps = dict(zip([n, n + 1], [x.sin(), x.cos()]))
    return steps[n + 1] - steps[n]


@case(xn)
def int_key_in_dict_update(x, n):
    seen = {0: x}
    seen.update({n: x + 1})
    seen.update([(n + 1, x + 2)])
    seen.update(width=x * 3)
    return sum(v.sum() for v in seen.values()), list(seen)


@case(xn)
def int_key_in_dict_fromkeys(x, n):
    counts = dict.fromkeys([n, n + 1, n], 0)
    counts[n] += 1
    return x * counts[n], list(counts.items())


@case(xn)
def int_key_in_ordered_dict_fromkeys(x, n):
    order = OrderedDict.fromkeys(range(3))
    order[n] = None
    order.move_to_end(0)
    return x + len(order), list(order)


@case(xn)
def int_key_moved_to_end(x, n):
    layers = OrderedDict([(1, x), (n, x * 2), (9, x * 3)])
    layers.move_to_end(n)
    return list(layers.values())[-1] + 1, list(layers)


@case(xn)
def int_key_in_setdefault(x, n):
    buckets = {}
    buckets.setdefault(n, []).append(x)
    buckets.setdefault(n, []).append(x * 2)
    return torch.stack(buckets[n]).sum(0), len(buckets[n])


@case(xn)
def int_key_popped(x, n):
    cache = {n: x, 1: x * 2}
    y = cache.pop(n)
    return y + cache.pop(n, x), list(cache), cache.get(n) is None


@case(xn)
def int_key_in_defaultdict(x, n):
    groups = defaultdict(list)
    for i in range(n):
        groups[i % 2].append(x * i)
    groups[n].append(x)
    return [torch.stack(g).sum(0) for g in groups.values()], list(groups)


@case(xn)
def int_counted(x, n):
    lengths = Counter([n, n, 2])
    return x * lengths[n], lengths.most_common(1)


@case(xn)
def int_elements_of_a_set(x, n):
    seen = {n, 1, 2}
    seen.add(n + 1)
    seen.discard(2)
    return x * len(seen), n in seen, sorted(seen)


@case(xn)
def int_elements_of_set_call(x, n):
    sizes = set([n, n, 3])
    return x * len(sizes), sorted(sizes)


@case(xn)
def int_elements_of_frozenset(x, n):
    dims = frozenset([n, 1])
    return x * len(dims), n in dims, sorted(dims | {7})


@case(xn)
def int_elements_in_set_methods(x, n):
    allowed = {1, 2, 3}
    both = allowed.intersection([n, 1])
    extra = allowed.union({n})
    return x * len(both) + len(extra), sorted(both), allowed.issuperset({n})
