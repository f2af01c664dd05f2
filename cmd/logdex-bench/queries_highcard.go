package main

import "github.com/logdex/logdex/fixtures/loggen"

// highcardQueryDefs is the query set of the high-cardinality corpus: what
// one looks for in traced JSON logs — a whole id, part of one, a phrase,
// literals with spaces and punctuation, URLs, regexes around a literal.
func highcardQueryDefs() []qdef {
	txt := needleTexts(loggen.ProfileHighCard)
	trace := txt[loggen.NeedleTrace]
	return []qdef{
		literal("rare id: a whole trace_id", trace, loggen.NeedleTrace),
		term("rare id as a word (query language)", trace),
		literal("partial id: 8 hex digits inside a trace_id", txt[loggen.NeedlePartial], loggen.NeedlePartial),
		literal("rare id: an order number", txt[loggen.NeedleOrder], loggen.NeedleOrder),
		term("selective term", "deadlock"),
		term("common term", "error"),
		phrase("phrase", []string{"pool", "exhausted"}),
		literal("literal, IP and port", txt[loggen.NeedleIPPort], loggen.NeedleIPPort),
		literal("literal, spaces and punctuation", txt[loggen.NeedleReset], loggen.NeedleReset),
		literal("literal, a JSON field", `"status":504`, ""),
		literal("URL, rare", txt[loggen.NeedleRefund], loggen.NeedleRefund),
		literal("URL prefix, common", "https://hooks.partner-", ""),
		regex("regex, required literal (trace_id prefix)", trace[:8]+`[0-9a-f]{24}`),
		regex("regex, required literal", `pool exhausted: all [0-9]+ connections`),
		regex("regex, required literal (order numbers)", `ORD-2026-000441[0-9]`),
	}
}

// needleTexts maps the names of a profile's needles (loggen.NeedleTrace,
// ...) to their text.
func needleTexts(profile string) map[string]string {
	txt := map[string]string{}
	for _, n := range loggen.NeedlesOf(profile) {
		txt[n.Name] = n.Text
	}
	return txt
}
