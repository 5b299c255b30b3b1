# Lazy stand-ins for the itertools functions and `filter`, traced as user generators where an
# argument is itself lazy (a user generator the tracer resumes item by item, or a callable
# with effects): each pull of the result pulls its arguments only as far as CPython's C
# implementation does, so the generator's body and the consumer's run interleaved as in eager.
# Only builtins are called here (`iter`, `next` with a default, `zip`), which the tracer models
# itself. Written for torchferro from the documented behaviour of each function.

_MISSING = object()


def chain(*iterables):
    for it in iterables:
        yield from it


def chain_from_iterable(iterables):
    for it in iterables:
        yield from it


def filter(function, iterable):
    if function is None:
        for x in iterable:
            if x:
                yield x
    else:
        for x in iterable:
            if function(x):
                yield x


def filterfalse(function, iterable):
    if function is None:
        for x in iterable:
            if not x:
                yield x
    else:
        for x in iterable:
            if not function(x):
                yield x


def takewhile(predicate, iterable):
    for x in iterable:
        if not predicate(x):
            return
        yield x


def dropwhile(predicate, iterable):
    it = iter(iterable)
    for x in it:
        if not predicate(x):
            yield x
            break
    for x in it:
        yield x


def accumulate(iterable, func=None, initial=None):
    it = iter(iterable)
    total = initial
    if initial is None:
        total = next(it, _MISSING)
        if total is _MISSING:
            return
    yield total
    for x in it:
        total = total + x if func is None else func(total, x)
        yield total


def pairwise(iterable):
    it = iter(iterable)
    a = next(it, _MISSING)
    if a is _MISSING:
        return
    for b in it:
        yield a, b
        a = b


def starmap(function, iterable):
    for args in iterable:
        yield function(*args)


def compress(data, selectors):
    for d, s in zip(data, selectors):
        if s:
            yield d


def zip_longest(*iterables, fillvalue=None):
    iterators = [iter(it) for it in iterables]
    active = len(iterators)
    if not active:
        return
    while True:
        values = []
        for i in range(len(iterators)):
            it = iterators[i]
            if it is None:
                values.append(fillvalue)
                continue
            value = next(it, _MISSING)
            if value is _MISSING:
                active -= 1
                if not active:
                    return
                iterators[i] = None
                value = fillvalue
            values.append(value)
        yield tuple(values)


def cycle(iterable):
    saved = []
    for x in iterable:
        yield x
        saved.append(x)
    if not saved:
        return
    while True:
        for x in saved:
            yield x


# `islice` with its bounds already checked (ints, `stop` None or >= 0, `step` >= 1): skips to
# the next index, then stops before pulling once the count reaches `stop`.
def islice(iterable, start, stop, step):
    it = iter(iterable)
    count = 0
    wanted = start
    while True:
        while count < wanted:
            if next(it, _MISSING) is _MISSING:
                return
            count += 1
        if stop is not None and count >= stop:
            return
        item = next(it, _MISSING)
        if item is _MISSING:
            return
        count += 1
        yield item
        wanted += step
        if stop is not None and wanted > stop:
            wanted = stop


# `tee`: each branch reads its own buffer first and pulls the shared iterator only when that
# buffer is empty, handing the value to every branch's buffer.
def tee(iterable, n=2):
    it = iter(iterable)
    buffers = []
    for _ in range(n):
        buffers.append([])
    branches = []
    for mine in buffers:
        branch = _tee_branch(it, buffers, mine)
        branches.append(branch)
    return tuple(branches)


def _tee_branch(it, buffers, mine):
    while True:
        if not mine:
            value = next(it, _MISSING)
            if value is _MISSING:
                return
            for b in buffers:
                b.append(value)
        value = mine[0]
        del mine[0]
        yield value


# `groupby`: one shared pull for the groups and the outer iterator. `state` holds the current
# value, its key, whether the input is spent, and the number of the live group: a group whose
# number is no longer live yields nothing more (the outer iterator moved past it), and moving
# the outer iterator on skips what is left of the live group, pulling as CPython does.
def groupby(iterable, key=None):
    it = iter(iterable)
    state = [None, None, False, 0]
    if not _groupby_pull(it, key, state):
        return
    while not state[2]:
        target = state[1]
        state[3] += 1
        yield target, _groupby_group(it, key, state, target, state[3])
        while not state[2] and state[1] == target:
            _groupby_pull(it, key, state)


def _groupby_pull(it, key, state):
    value = next(it, _MISSING)
    if value is _MISSING:
        state[2] = True
        return False
    state[0] = value
    state[1] = value if key is None else key(value)
    return True


def _groupby_group(it, key, state, target, number):
    if state[3] != number:
        return
    yield state[0]
    while state[3] == number:
        if not _groupby_pull(it, key, state) or state[1] != target:
            return
        yield state[0]


# A user iterator object (its class's `__iter__` returned an object with `__next__`): one
# `__next__` call per pull, as the loop that drives it in CPython does.
def user_iterator(it):
    while True:
        try:
            value = it.__next__()
        except StopIteration:
            return
        yield value


# The old sequence protocol (a class with `__getitem__` and no `__iter__`): `obj[0]`,
# `obj[1]`, ... one per pull, until one raises `IndexError` (or `StopIteration`).
def sequence_protocol(obj):
    i = 0
    while True:
        try:
            value = obj[i]
        except (IndexError, StopIteration):
            return
        yield value
        i += 1
