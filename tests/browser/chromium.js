// SPDX-License-Identifier: GPL-2.0
//
// What the browser drivers share (flamegraph.js, speedscope.js): Debian's
// Chromium driven by playwright-core in a throw-away profile, page errors
// and console errors collected, the screenshot directory.
//
//   const { withPage, artifacts } = require("./chromium");
//   await withPage({ width, height, args }, async (page, errors) => { ... });

"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

// The directory for screenshots: $ARTIFACT_DIR, else the bats test's, else /tmp.
function artifacts() {
	const d = process.env.ARTIFACT_DIR || process.env.BATS_TEST_TMPDIR || "/tmp";
	fs.mkdirSync(d, { recursive: true });
	return d;
}

// withPage(opts, fn): fn(page, errors) in a fresh headless Chromium;
// opts.width/height: the viewport; opts.args: extra Chromium flags;
// opts.timeout: the page's default timeout (ms).
async function withPage(opts, fn) {
	if (!fs.existsSync(CHROMIUM))
		throw new Error(`${CHROMIUM} not found: install Debian's chromium (tests/lib/deps.sh browser)`);
	let chromium;
	try {
		({ chromium } = require("playwright-core"));
	} catch (e) {
		throw new Error("playwright-core missing: run npm ci --prefix tests/browser (tests/lib/deps.sh browser)");
	}
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "offsample-chromium-"));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		viewport: { width: opts.width || 1280, height: opts.height || 800 },
		args: ["--headless", "--no-sandbox", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update",
			"--disable-sync", ...(opts.args || [])],
	});
	try {
		const page = context.pages()[0] || await context.newPage();
		page.setDefaultTimeout(opts.timeout || 10000);
		const errors = [];
		page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
		page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
		return await fn(page, errors);
	} finally {
		await context.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
}

// parseArgs(argv, required): "--name value" pairs as { name: value };
// throws on a malformed argument or a missing required name.
function parseArgs(argv, required) {
	const a = {};
	for (let i = 0; i < argv.length; i += 2) {
		if (!argv[i].startsWith("--") || i + 1 >= argv.length)
			throw new Error(`bad argument '${argv[i]}'`);
		a[argv[i].slice(2)] = argv[i + 1];
	}
	for (const k of required)
		if (!(k in a)) throw new Error(`missing --${k}`);
	return a;
}

// check(cond, what): throws "check failed: what" unless cond, else prints
// "ok - what"; check.count is how many passed.
function check(cond, what) {
	if (!cond) throw new Error(`check failed: ${what}`);
	check.count = (check.count || 0) + 1;
	console.log(`ok - ${what}`);
}

module.exports = { withPage, artifacts, parseArgs, check };
