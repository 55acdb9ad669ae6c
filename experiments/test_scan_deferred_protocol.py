"""A CPU model of experiments/scan_async_deferred.cu's bookkeeping: tickets, the ticket ring, the tile
buffers and their cp.async groups, the warp-offset slots, the status words and the look-back, for
several blocks run in random orders. It mirrors the kernel's loop and index formulas line by line
(deferred_scan), and checks:
  - no shared slot is written by one set of threads and touched by another between two barriers;
  - a tile is scanned only from a buffer holding it whose group wait_group<kStages - kLag - 1> has
    completed, stored before its buffer is refilled, and a buffer is refilled only once stored;
  - every block ends, whatever order the blocks run in (no deadlock), with the exact prefix sums;
  - tiles + grid tickets are drawn, and the counter is back at 0 for the next call.
No GPU; a few hundred small runs, well under a second.
"""

import random

import pytest

NONE, AGGREGATE, PREFIX = 0, 1, 2


class Hazard(AssertionError):
    pass


class Interval:
    """Accesses to shared slots between two barriers, by thread set: 't0' (thread 0), 'w0' (the first
    warp), 'all' (every thread). A write by one set and any access by another is a race."""

    def __init__(self):
        self.access = {}  # slot -> set of (who, kind)

    def note(self, who, kind, slot):
        self.access.setdefault(slot, set()).add((who, kind))

    def check(self):
        for slot, seen in self.access.items():
            writers = {who for who, kind in seen if kind == "w"}
            others = {who for who, _ in seen}
            if writers and len(others) > 1:
                raise Hazard(f"{slot}: {sorted(seen)}")
        self.access.clear()


def block_program(b, g, stages, lag, spare_ring=0, spare_slots=0, spare_pending=0):
    """The kernel's deferred_scan for one block, as a generator: it yields 'barrier' at each
    __syncthreads and 'spin' while its first warp's look-back waits for a status word. spare_*:
    slots added to the kernel's kRing = kStages + 2 and kSlots = kLag + 2 (negative: fewer);
    spare_pending: added to the groups wait_group leaves in flight (kStages - kLag - 1)."""
    k_issued_first = stages - lag
    k_in_flight = stages - lag - 1 + spare_pending
    k_ring, k_slots = stages + 2 + spare_ring, lag + 2 + spare_slots
    tiles, tile_len, x = g["tiles"], g["tile_len"], g["x"]
    ring = [None] * k_ring
    offsets = [None] * k_slots  # per slot: (what, tile index, value), the warps' sums modelled as one
    aggregates = [None] * k_slots
    buffers = [("free", None)] * stages  # (state, tile index)
    groups = []  # committed groups: [index or None, complete]
    interval = Interval()
    past_end = [False]

    def draw():
        if past_end[0]:
            return None
        ticket = g["counter"]
        g["counter"] += 1
        g["draws"] += 1
        return ticket

    def settle(ticket):
        if ticket is None:
            return tiles
        if ticket >= tiles:
            past_end[0] = True
            if ticket == tiles + g["grid"] - 1:
                g["counter"] = 0
            return tiles
        return ticket

    def ring_read(who, index):
        interval.note(who, "r", ("ring", index % k_ring))
        value = ring[index % k_ring]
        assert value is not None and value[0] == index, (b, index, value)
        return value[1]

    def ring_write(who, index, tile):
        interval.note(who, "w", ("ring", index % k_ring))
        ring[index % k_ring] = (index, tile)

    def slot_access(who, kind, index):
        interval.note(who, kind, ("offsets", index % k_slots))

    def issue(index, tile):
        buffer = index % stages
        state, _ = buffers[buffer]
        assert state == "free", (b, index, buffers)
        real = tile < tiles
        buffers[buffer] = ("flight", index) if real else ("free", None)
        groups.append([index if real else None, False])

    def wait_group(pending):
        for group in groups[: max(0, len(groups) - pending)]:
            if not group[1]:
                group[1] = True
                if group[0] is not None:
                    buffer = group[0] % stages
                    assert buffers[buffer] == ("flight", group[0])
                    buffers[buffer] = ("landed", group[0])

    def barrier():
        interval.check()

    # Prologue.
    for s in range(k_issued_first + 1):
        ring_write("t0", s, settle(draw()))
    barrier()
    yield "barrier"
    for s in range(k_issued_first):
        issue(s, ring_read("all", s))

    kept = {}  # index -> the tile's local inclusive scan (the kernel: kVecs registers + the raw buffer)
    k = 0
    while True:
        if k >= lag and ring_read("all", k - lag) >= tiles:
            break
        tile = ring_read("all", k)
        drawn = draw()  # thread 0; settled after the barrier
        wait_group(k_in_flight)
        if tile < tiles:
            assert buffers[k % stages] == ("landed", k), (b, k, buffers)
            values = x[tile * tile_len:(tile + 1) * tile_len]
            local, total = [], 0
            for v in values:
                total += v
                local.append(total)
            kept[k] = local
            slot_access("all", "w", k)
            offsets[k % k_slots] = ("total", k, total)
        barrier()
        yield "barrier"

        ring_write("t0", k + k_issued_first + 1, settle(drawn))
        # The first warp: tile k's aggregate, then the look-back of tile index k + 1 - lag.
        if tile < tiles:
            slot_access("w0", "r", k)
            kind, index, total = offsets[k % k_slots]
            assert (kind, index) == ("total", k)
            slot_access("w0", "w", k)
            offsets[k % k_slots] = ("within", k, 0)
            aggregates[k % k_slots] = (k, total)
            g["status"][tile] = (PREFIX if tile == 0 else AGGREGATE, total)
        if k + 1 >= lag:
            index = k + 1 - lag
            looked = ring_read("w0", index)
            if looked < tiles:
                while True:  # look_back: add predecessors until one with its inclusive prefix
                    exclusive, t, blocked = 0, looked - 1, False
                    while t >= 0:
                        flag, value = g["status"][t]
                        if flag == NONE:
                            blocked = True
                            break
                        exclusive += value
                        if flag == PREFIX:
                            break
                        t -= 1
                    if not blocked:
                        break
                    yield "spin"
                agg_index, aggregate = aggregates[index % k_slots]
                assert agg_index == index
                if looked > 0:
                    g["status"][looked] = (PREFIX, exclusive + aggregate)
                slot_access("w0", "r", index)
                slot_access("w0", "w", index)
                kind, at, _ = offsets[index % k_slots]
                assert (kind, at) == ("within", index)
                offsets[index % k_slots] = ("final", index, exclusive)

        # Every warp: store tile index k - lag, refill its buffer with index k - lag + stages.
        if k >= lag:
            stored = ring_read("all", k - lag)
            if stored < tiles:
                buffer = (k + k_issued_first) % stages
                assert buffers[buffer] == ("landed", k - lag), (b, k, buffers)
                slot_access("all", "r", k - lag)
                kind, at, exclusive = offsets[(k - lag) % k_slots]
                assert (kind, at) == ("final", k - lag)
                g["out"][stored * tile_len:(stored + 1) * tile_len] = [exclusive + v for v in kept.pop(k - lag)]
                buffers[buffer] = ("free", None)
        assert (k + k_issued_first) % stages == (k - lag) % stages
        issue(k + k_issued_first, ring_read("all", k + k_issued_first))
        k += 1
    assert not kept and all(state == "free" for state, _ in buffers), (b, kept, buffers)


def simulate(tiles, grid, stages, lag, rng_seed, tile_len=3, calls=2, **spare):
    rng = random.Random(rng_seed)
    g = {"counter": 0, "grid": grid, "tiles": tiles, "tile_len": tile_len}
    for _ in range(calls):  # several calls in a row on one counter
        g["x"] = [rng.randint(-5, 5) for _ in range(tiles * tile_len)]
        g["out"] = [None] * (tiles * tile_len)
        g["status"] = [(NONE, 0)] * tiles
        g["draws"] = 0
        programs = {b: block_program(b, g, stages, lag, **spare) for b in range(grid)}
        spinning = set()
        while programs:
            b = rng.choice(sorted(programs))
            try:
                step = next(programs[b])
            except StopIteration:
                del programs[b]
                spinning.clear()
                continue
            if step == "spin":
                spinning.add(b)
                if spinning >= set(programs):
                    # Every live block spins: give each one more chance, then it is a deadlock.
                    if all(next(programs[c]) == "spin" for c in sorted(programs)):
                        raise AssertionError(f"deadlock: blocks {sorted(programs)} all wait")
                    spinning.clear()
            else:
                spinning.discard(b)
        expected, total = [], 0
        for v in g["x"]:
            total += v
            expected.append(total)
        assert g["out"] == expected
        assert g["draws"] == tiles + grid and g["counter"] == 0


@pytest.mark.parametrize("stages,lag", [(3, 1), (4, 1), (6, 1), (4, 2), (6, 2)])
def test_the_deferred_protocol_is_race_free_deadlock_free_and_exact(stages, lag):
    for rng_seed in range(40):
        rng = random.Random(rng_seed)
        grid = rng.choice([1, 2, 3, 5])
        tiles = rng.choice([1, 2, grid, grid + 1, 7, 19])
        simulate(tiles, min(grid, tiles), stages, lag, rng_seed)


@pytest.mark.parametrize("stages,lag", [(3, 1), (4, 2), (6, 2)])
def test_one_ticket_slot_fewer_races(stages, lag):
    """kRing = kStages + 2 is the fewest ticket slots with no race: with one fewer, thread 0 writes a
    slot that the other threads still read (in the same interval, or later) (the model catches what it is for).
    (kSlots = kLag + 2 is one more than needed per warp, since each warp reads and writes only its
    own offset; the kernel keeps it so that no ordering within a warp is relied on.)"""
    with pytest.raises(AssertionError):  # a Hazard, or a ticket read after its slot was reused
        for rng_seed in range(10):
            simulate(9, 2, stages, lag, rng_seed, spare_ring=-1)


@pytest.mark.parametrize("stages,lag", [(3, 1), (6, 2)])
def test_waiting_for_one_group_fewer_scans_a_tile_still_in_flight(stages, lag):
    with pytest.raises(AssertionError):
        simulate(9, 2, stages, lag, 0, spare_pending=1)
