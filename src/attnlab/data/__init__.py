"""The data half of the pipeline: download, byte-level BPE, token Parquet files, seeded batches."""
