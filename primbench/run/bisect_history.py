"""The commits `primbench bisect GOOD BAD` searches: GOOD, then each commit after it on BAD's
first-parent line, up to BAD. Read from git alone (ab_revision's git), in the repository that holds
the variant's declaring file; nothing is checked out, so the working tree is never touched.

First parents only, as `git bisect --first-parent` does: a merged branch is one step (its merge),
and every commit's neighbour in the list is its own first parent, which a step may time it against.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from primbench.errors import UserError
from primbench.run.ab_revision import commit_in, git
from primbench.text_safety import printable

WHAT = "bisect"  # how git's one-line refusals name the command


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str  # the commit message's first line, as printable text

    def label(self, width: int = 50) -> str:
        """'1a2b3c4d5e6f the subject, cut to width'."""
        subject = self.subject if len(self.subject) <= width else self.subject[:width - 3] + "..."
        return f"{self.sha[:12]} {subject}"


def first_parent_line(root: Path, good: str, bad: str) -> list[Commit]:
    """[GOOD, the commits after it on BAD's first-parent line, ..., BAD]. Refused in one line where
    either is no commit, they are the same, GOOD is not an ancestor of BAD, or GOOD came in through
    a merge (it is not on BAD's first-parent line)."""
    good_sha, bad_sha = commit_in(root, good, f"{WHAT} GOOD"), commit_in(root, bad, f"{WHAT} BAD")
    if good_sha == bad_sha:
        raise UserError(f"{WHAT}: GOOD {good[:80]!r} and BAD {bad[:80]!r} are the same commit ({good_sha[:12]}); "
                        "give the last fast commit first, then the slow one")
    if git(root, "merge-base", "--is-ancestor", good_sha, bad_sha, option=WHAT) is None:
        swapped = git(root, "merge-base", "--is-ancestor", bad_sha, good_sha, option=WHAT) is not None
        raise UserError(f"{WHAT}: GOOD {good[:80]!r} is not an ancestor of BAD {bad[:80]!r}; "
                        + ("give them the other way round (GOOD, the older, first)" if swapped
                           else "give a commit BAD was built on (`git log BAD` lists them)"))
    listing = git(root, "log", "--first-parent", "--reverse", "--format=%H%x00%P%x00%s", f"{good_sha}..{bad_sha}",
                  binary=True, option=WHAT)
    after = [_commit(line) for line in (listing or b"").splitlines() if line]
    if not after or after[0][1] != good_sha:
        raise UserError(f"{WHAT}: GOOD {good[:80]!r} came into BAD through a merge (it is not on BAD's first-parent "
                        "line); give a commit that `git log --first-parent BAD` lists")
    subject = git(root, "log", "-1", "--format=%s", good_sha, binary=True, option=WHAT) or b""
    return [Commit(good_sha, _text(subject))] + [commit for commit, _parent in after]


def _commit(line: bytes) -> tuple[Commit, str]:
    """(the commit of one `%H NUL %P NUL %s` line, its first parent)."""
    sha, parents, subject = (line.split(b"\0", 2) + [b"", b""])[:3]
    return Commit(sha.decode(), _text(subject)), (parents.split() or [b""])[0].decode()


def _text(subject: bytes) -> str:
    """A subject is the user's text in any encoding: shown printable, never a decoding error."""
    return printable(subject.decode("utf-8", errors="replace").strip())
