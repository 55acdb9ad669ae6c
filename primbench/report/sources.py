"""The key to primbench's sources, its series and "% light", in words a newcomer can read: what the
HTML report's "key to sources" and `primbench list`'s key print. Data only, so the page and the
terminal say the same thing and a test can check that every registered series is explained.

SOURCES: one entry per source a variant's origin cites ("seed 004 (its scan section)", "Harris
kernel 3"): its id, a short English title, a one-line description, its original title, a plain
text citation, and `path`, the in-repository copy of the source. The seed articles (Chinese
originals) have no copy inside the repository, so `path` is None and the citation names the
article instead; no entry carries a URL, because the report must make no network request.

SERIES: every series a built-in variant declares (Variant.series), with one line on what it is.

LIGHT: what a "% light" figure means (runfile/frame.py's pct_sol).
"""

SOURCES = (
    {
        "id": "seed000",
        "label": "seed 000",
        "title": "CUDA Programming Primer, part 3: Reduce in practice, from a naive kernel to a fast one",
        "description": "A Chinese blog article (part 3 of a series on CUDA and HPC) taking a sum from one global "
                       "atomicAdd per thread to a multi-level reduction with no atomics: the seed000 kernels.",
        "original_title": "【CUDA编程入门③】经典算子实战Reduce归约——从朴素实现到高性能优化的演进之路",
        "citation": "\"CUDA编程入门③: 经典算子实战Reduce归约\", a Chinese-language blog article (part 3 of the series "
                    "\"CUDA编程与HPC高性能计算\"); the copy primbench was built from names no author.",
        "path": None,
    },
    {
        "id": "seed002",
        "label": "seed 002",
        "title": "CUDA optimization in practice: parallel reduction, from warp divergence to bank conflicts",
        "description": "A Chinese blog article that retells Harris's reduction steps (its reduce0 to reduce6) and "
                       "times them on an RTX 3080: the kernels of the harris series.",
        "original_title": "CUDA优化实战：从线程束分化到Bank Conflict的并行规约演进",
        "citation": "\"CUDA优化实战：从线程束分化到Bank Conflict的并行规约演进\", a Chinese-language blog article; the copy "
                    "primbench was built from names no author.",
        "path": None,
    },
    {
        "id": "seed004",
        "label": "seed 004",
        "title": "GPU programming basics, chapter 4: parallel patterns (reduction, scan and stencil)",
        "description": "A Chinese tutorial chapter with a section each on reduction, scan, stencils (a shared-memory "
                       "halo), histograms (atomics and privatization), work and span, top-k by two-stage pruning, "
                       "and common mistakes: the seed004 kernels.",
        "original_title": "GPU 编程基础, 4. 并行模式:归约、扫描与模板计算",
        "citation": "\"GPU 编程基础\", chapter 4 \"并行模式:归约、扫描与模板计算\", a Chinese-language tutorial; the copy "
                    "primbench was built from names no author.",
        "path": None,
    },
    {
        "id": "harris",
        "label": "Harris",
        "title": "Optimizing Parallel Reduction in CUDA",
        "description": "Mark Harris's NVIDIA slides: seven reduction kernels, each removing the bottleneck of the one "
                       "before, timed on a G80; seed 002 follows them step by step.",
        "original_title": "Optimizing Parallel Reduction in CUDA",
        "citation": "Mark Harris, \"Optimizing Parallel Reduction in CUDA\", NVIDIA, 2007.",
        "path": None,
    },
)

SERIES = {
    "harris": "Mark Harris's reduction steps (\"Optimizing Parallel Reduction in CUDA\", NVIDIA, 2007) as seed 002 "
              "writes them, and safe forms of the two with a hazard",
    "seed000": "the sum kernels of seed 000, as the article writes them",
    "seed004": "the kernels of seed 004 (reduction, scan, stencil, histogram, top-k), as the article writes them",
    "textbook": "classic published algorithms the seeds point to but do not write out (Blelloch's scan, warp-shuffle scans)",
    "beyond": "primbench's own kernels past the seeds: the steps from the seeds' code to the memory's limit",
    "accuracy": "sums that give up a little speed for accuracy: compensated (Kahan-Babuska-Neumaier) or float64 "
                "accumulators, for the accuracy study",
    "library": "the libraries each op is measured against: CuPy's CUB and sort, today's CCCL (cuda.compute), torch, "
               "FlashInfer and cupyx where installed; at each size the fastest of them is the op's best library, which "
               "every ratio is against",
}

LIGHT = ("% light is the time a case's minimal bytes would take at this run's measured pure-read rate (or at its "
         "measured copy rate, for an op that writes as much as it reads) as a percentage of the case's median time: "
         "100 % means the case runs at the speed of light of memory.")
