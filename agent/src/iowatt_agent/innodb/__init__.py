"""The InnoDB flushing-policy matrix (the kind `innodb_flush`, docs/innodb-flush.md): a private
MariaDB on the target, run as the DBMS's unprivileged user exactly as TPC-H's (`tpch.isolation`,
`tpch.dbms`), under sysbench's `oltp_write_only` once per setting of
`innodb_flush_log_at_trx_commit` x `sync_binlog`. `lease` is the agent's child and its parent
side, `worker` the run as the DBMS user, `sysbench` the load generator's command and output."""
