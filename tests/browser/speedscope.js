#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// Open an `offsample pprof` profile in speedscope (the npm release, served
// from node_modules as file://) in Debian's Chromium, the way a user does:
// "Browse" on the landing page, then the Sandwich view, whose table lists
// every function with its total and self weight.  Prints the table as
// JSON lines {"name": ..., "total": ..., "self": ...} on stdout for the
// caller to compare with the input; fails on a page error or when the
// profile is not shown.
//
//   node speedscope.js --profile FILE.pb.gz
//
// Screenshots go to $ARTIFACT_DIR (default $BATS_TEST_TMPDIR, else /tmp).

"use strict";

const fs = require("fs");
const path = require("path");
const { withPage, artifacts: chromiumArtifacts } = require("./chromium");

async function main() {
	const argv = process.argv.slice(2);
	if (argv.length !== 2 || argv[0] !== "--profile")
		throw new Error("usage: speedscope.js --profile FILE");
	const file = path.resolve(argv[1]);
	const index = path.join(__dirname, "node_modules/speedscope/dist/release/index.html");
	if (!fs.existsSync(index))
		throw new Error("speedscope missing: run npm ci --prefix tests/browser (tests/lib/deps.sh browser)");
	const artifacts = chromiumArtifacts();
	// WebGL (speedscope draws with it) in software.
	const gl = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"];
	await withPage({ width: 1600, height: 1000, args: gl, timeout: 20000 }, async (page, errors) => {
		await page.goto("file://" + index);
		// The landing page's "Browse" button is the label of #file.
		await page.locator("input#file").setInputFiles(file);
		// The loaded profile's name is shown in the toolbar.
		await page.getByText(path.basename(file)).first().waitFor();
		await page.screenshot({ path: path.join(artifacts, "speedscope-flame.png") });
		await page.getByText("Sandwich").first().click();
		// The sandwich table: rows of total, self, symbol name.
		await page.waitForFunction(() => document.querySelectorAll("tr").length > 1);
		await page.screenshot({ path: path.join(artifacts, "speedscope-sandwich.png") });
		const rows = await page.evaluate(() => Array.from(document.querySelectorAll("tr"))
			.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.innerText.trim()))
			.filter((c) => c.length >= 3));
		if (errors.length) throw new Error(errors.join("; "));
		if (!rows.length) throw new Error("the sandwich view has no rows");
		for (const c of rows)
			console.log(JSON.stringify({ total: c[0], self: c[1], name: c[c.length - 1] }));
	});
}

main().then(() => process.exit(0), (e) => {
	console.error(`speedscope.js: ${e.message}`);
	process.exit(1);
});
