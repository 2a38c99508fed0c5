"""One configuration schema for run, grid and compare files and the command line.

- :mod:`weatkit.config.files`: reading YAML/TOML files (duplicate YAML keys refused), key paths,
  paths relative to the file's folder, model locations, layer numbers;
- :mod:`weatkit.config.schema`: every option declared once (field, type, default, help, file
  key, flag), the validation shared by files and the command line, click decorators; the
  model's section is declared in :mod:`weatkit.config.model_sections`, the isomorphism,
  pooling and association metrics' in :mod:`weatkit.config.analysis_sections`, how a
  declaration is read in :mod:`weatkit.config.declare`;
- :mod:`weatkit.config.run`: the one builder of a :class:`~weatkit.pipeline.RunConfig`.

Nothing is imported here, so that ``import weatkit.config.schema`` stays cheap.
"""
