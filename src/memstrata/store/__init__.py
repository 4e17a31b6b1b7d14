"""Record store adapters. Each implements :class:`memstrata.ports.RecordStore`."""
