//! Driver memory manager (CLAP §4.1–4.5). (being written)
