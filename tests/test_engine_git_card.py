"""The version-control card's families (issue 33), written from git's behaviour for any git tool's naming: a
branch name is taken once and starts from something that exists, `git add` needs paths the repository has, and
a commit needs something staged, records the index and moves the branch. Run on a repository as the world holds
a real one (`engine/world/real.py`), on the card's rules alone."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller, tool_spec

STR = {"type": "string"}
STRS = {"type": "array", "items": STR}
REPO = "/scratch/git/repo"

TOOLS = [tool_spec("vcs", "git_create_branch", {"repo_path": STR, "branch_name": STR, "base_branch": STR},
                   ["repo_path", "branch_name"]),
         tool_spec("vcs", "git_add", {"repo_path": STR, "files": STRS}),
         tool_spec("vcs", "git_commit", {"repo_path": STR, "message": STR})]


def repository(staged: bool) -> Any:
    readme = {"content": "# probe\n", "blob": "b1"}
    changelog = {"content": "# Changes\n", "blob": "b2"}
    index = {"README.md": readme, **({"CHANGELOG.md": changelog} if staged else {})}
    state = {"repo": REPO, "head": {"branch": "main", "commit": None},
             "branches": {"main": {"commit": "c0ffee0"}},
             "commits": {"c0ffee0": {"message": "initial commit", "parents": [], "tree": {"README.md": readme}}},
             "index": index, "worktree": {"README.md": readme, "CHANGELOG.md": changelog}}
    return rules_caller("vcs", "version_control", state, {"commit": "commits", "branch": "branches"}, TOOLS)


def test_a_branch_name_is_taken_once_and_starts_from_what_exists() -> None:
    call = repository(staged=False)
    assert call("git_create_branch", repo_path=REPO, branch_name="main").error_class == "business"
    assert call("git_create_branch", repo_path=REPO, branch_name="fix", base_branch="develop").error_class == "not_found"
    assert not call("git_create_branch", repo_path=REPO, branch_name="fix", base_branch="main").is_error


def test_adding_a_path_the_repository_lacks_is_refused() -> None:
    call = repository(staged=False)
    missing = call("git_add", repo_path=REPO, files=["ideas.md"])
    assert missing.is_error and "pathspec 'ideas.md'" in missing.text, missing.text
    assert call("git_add", repo_path=REPO, files=[f"{REPO}/README.md", "."]).error_class != "business"


def test_a_commit_needs_something_staged_and_then_nothing_is_left_to_commit() -> None:
    assert repository(staged=False)("git_commit", repo_path=REPO, message="wip").error_class == "business"
    call = repository(staged=True)
    made = call("git_commit", repo_path=REPO, message="Add changelog")
    assert not made.is_error and len(made.text.rsplit(" ", 1)[-1]) == 40, made.text
    again = call("git_commit", repo_path=REPO, message="Add changelog again")
    assert again.error_class == "business", again.text
