package runstore

// SetTextPlan makes the thresholds of a text query's plan (textsearch.go) few and most, so
// that a test of a few runs takes each way.
func SetTextPlan(s *SQLite, few, most int) { s.text = textPlan{few, most} }
