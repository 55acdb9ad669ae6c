"""Stage 3, measuring: the timing protocol (Timer), its stopping policy, the GPU (Device), the
ceilings measured at run start, and `primbench.measure()` for any callable.

Named `measuring`, not `measure`: `primbench.measure` is the public function, and a subpackage of
that name would replace it on the package as soon as it was imported. Never imports config/.
"""
