"""The Temporal engine: batch and task workflows (`workflows`), their activities (`activities`),
the worker (`worker`) and the client side of `yagent batch` (`client`). Imported only when a
command asks for `--engine temporal`: `import yagent.cli` never imports temporalio."""
