"""The ``recovery_rate`` metric folder as a sub-package, so that import-linter and the package's tools see its
modules. ``evaluate.load`` and the folder's Hub Space use its files, never this package: keep it empty."""
