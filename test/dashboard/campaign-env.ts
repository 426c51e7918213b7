// Imported first by the dashboard's campaign test: small batches 3 s apart, so
// a campaign of a few recipients sends for a few seconds and the report can be watched (and the
// send paused) while it goes out. Set before the engine reads them at import.
process.env.POSTLANE_CAMPAIGN_BATCH ??= '2';
process.env.POSTLANE_CAMPAIGN_BATCH_DELAY_MS ??= '3000';
