"""Record streaming: a memory's record changes delivered as events to its Kinesis stream
(``streamDeliveryResources``), from the store's change feed (``ports.RecordChangeFeed``)."""
