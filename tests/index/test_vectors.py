"""The vector store on disk (index/vectors.py): a save never makes the folder it writes into again. The repository
may be deleted while a detached embedder saves (`rm -rf repo`): a folder made again then left `repo/.git/repo-memory`
behind, and `rm -rf` itself failed on the folder that was no longer empty."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from repo_memory.index.vectors import VectorIndex


def test_a_save_into_a_folder_that_is_gone_writes_nothing_and_makes_no_folder(tmp_path: Path):
    state = tmp_path / "repo" / ".git" / "repo-memory"
    state.mkdir(parents=True)
    vectors = VectorIndex(state / "vectors.usearch", "test-model", 4)
    vectors.load()
    vectors.add([1, 2], np.array([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.float32))
    vectors.save()
    assert (state / "vectors.usearch").is_file() and (state / "vectors.json").is_file()
    vectors.add([3], np.array([[0, 0, 1, 0]], dtype=np.float32))
    shutil.rmtree(tmp_path / "repo")
    assert vectors.save() is False
    assert not (tmp_path / "repo").exists(), sorted(str(p) for p in tmp_path.rglob("*"))
