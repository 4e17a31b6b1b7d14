"""Record stores on a database server, shared by many processes: PostgreSQL and MySQL/MariaDB.

``base`` (a pool of connections, transactions, retries of transient failures, migrations under
a lock), ``url`` (a store URL parsed, its password never shown), ``postgres`` and ``mysql``
(their driver, imported only when such a store is opened, and their schema).
"""
