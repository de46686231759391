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
const os = require("os");
const path = require("path");

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

async function main() {
	const argv = process.argv.slice(2);
	if (argv.length !== 2 || argv[0] !== "--profile")
		throw new Error("usage: speedscope.js --profile FILE");
	const file = path.resolve(argv[1]);
	if (!fs.existsSync(CHROMIUM))
		throw new Error(`${CHROMIUM} not found: install Debian's chromium (tests/lib/deps.sh browser)`);
	let chromium;
	try {
		({ chromium } = require("playwright-core"));
	} catch (e) {
		throw new Error("playwright-core missing: run npm ci --prefix tests/browser (tests/lib/deps.sh browser)");
	}
	const index = path.join(__dirname, "node_modules/speedscope/dist/release/index.html");
	if (!fs.existsSync(index))
		throw new Error("speedscope missing: run npm ci --prefix tests/browser (tests/lib/deps.sh browser)");
	const artifacts = process.env.ARTIFACT_DIR || process.env.BATS_TEST_TMPDIR || "/tmp";
	fs.mkdirSync(artifacts, { recursive: true });
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "offsample-chromium-"));

	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		viewport: { width: 1600, height: 1000 },
		args: ["--headless", "--no-sandbox", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
	});
	try {
		const page = context.pages()[0] || await context.newPage();
		page.setDefaultTimeout(20000);
		const errors = [];
		page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
		page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });

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
	} finally {
		await context.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
}

main().then(() => process.exit(0), (e) => {
	console.error(`speedscope.js: ${e.message}`);
	process.exit(1);
});
