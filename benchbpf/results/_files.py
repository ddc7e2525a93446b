"""Files written whole or not at all."""
import os

__all__ = ["replace_text"]


def replace_text(path, text):
    """Write `text` to `path` through a temporary file beside it and a rename,
    so that a reader sees the old file or the new one, never half of one;
    the folder is made if missing."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
