// The checker of the public API (make api), a module of its own so that
// its dependencies (apidiff, x/tools) are pinned here and verified by
// go.sum without entering the library's go.mod, which every user's
// module graph reads.
module zkrecipes.local/api

go 1.26.0

require (
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
