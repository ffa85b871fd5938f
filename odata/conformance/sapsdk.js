#!/usr/bin/env node
// SAP Cloud SDK for JavaScript (OData V4) as the Go tests of package odata use it
// (clients_conformance_test.go): the typed client its generator wrote for the $metadata of
// the demo service o2c (transpiled to JavaScript in a temporary directory) with the SDK's
// runtime, as an application would call it.
//
//   sapsdk.js GEN ROOT CASE...   GEN is the generator's output directory of the service
//                                (GEN/index.js), ROOT the service root URL. Prints one JSON
//                                object with a member per CASE: its result, or
//                                {"error": "..."} with the status and the server's message
//                                when the SDK's request failed.
//
// Cases, all over ORDERS_entries (the SDK's Orders_EntriesApi):
//   page:N             getAll().top(N).skip(k) for k = 0, N, 2N... until a short page:
//                      {"pages", "rows"}, every row converted to JSON (see row below);
//                      fails after 1000 full pages
//   key:ID             getByKey(ID): the row
//   count              getAll().filter(STATUS equals 'PAID').count(): a number
//   double             NET_VALUE greaterThan 50000 (Edm.Double: the SDK writes 50000D)
//   int64              DAYS_LATE greaterThan BigNumber 5 (Edm.Int64: 5L)
//   range              NET_VALUE lessOrEqual 1500.25 and DAYS_LATE greaterOrEqual 0
//                      (1500.25D, 0L)
//   contains           contains(STATUS, 'ED') equals true
//   tolower            toLower(STATUS) equals 'open'
//   year               year(ORDER_DATE) equals 2025 and NET_VALUE greaterThan 60000
// The filter cases select ORDER_ID, order by it ascending and return the ids.
"use strict";

const path = require("node:path");

// row converts an Orders_Entries entity to plain JSON: dates as YYYY-MM-DD, instants as
// RFC 3339 UTC, Int64 (a BigNumber) as its decimal string.
function row(e) {
  return {
    ORDER_ID: e.orderId,
    CUSTOMER_ID: e.customerId ?? null,
    ORDER_DATE: e.orderDate == null ? null : e.orderDate.format("YYYY-MM-DD"),
    CREATED_AT: e.createdAt == null ? null : e.createdAt.utc().format("YYYY-MM-DDTHH:mm:ss[Z]"),
    STATUS: e.status ?? null,
    NET_VALUE: e.netValue ?? null,
    CURRENCY: e.currency ?? null,
    DAYS_LATE: e.daysLate == null ? null : e.daysLate.toFixed(),
    EXPRESS: e.express ?? null,
    SALES_ORG: e.salesOrg ?? null,
  };
}

// failure describes a failed SDK request: the HTTP status and the OData error message the
// server sent, which the SDK keeps on the cause of its error.
function failure(err) {
  for (let e = err; e; e = e.cause) {
    const res = e.response;
    if (res) {
      const msg = res.data && res.data.error ? res.data.error.message : JSON.stringify(res.data);
      return `${res.status}: ${msg}`;
    }
  }
  return String(err.message || err);
}

async function main([gen, root, ...cases]) {
  const { o2C } = require(path.resolve(gen, "index.js"));
  const { and, asc, contains, filterFunctions } = require("@sap-cloud-sdk/odata-v4");
  const { BigNumber } = require("bignumber.js");
  const { toLower, year } = filterFunctions();
  const api = o2C().orders_EntriesApi;
  const s = api.schema;
  const dest = { url: root };
  const filters = {
    double: () => s.NET_VALUE.greaterThan(50000),
    int64: () => s.DAYS_LATE.greaterThan(new BigNumber(5)),
    range: () => and(s.NET_VALUE.lessOrEqual(1500.25), s.DAYS_LATE.greaterOrEqual(new BigNumber(0))),
    contains: () => contains(s.STATUS, "ED").equals(true),
    tolower: () => toLower(s.STATUS).equals("open"),
    year: () => and(year(s.ORDER_DATE).equals(2025), s.NET_VALUE.greaterThan(60000)),
  };
  const run = async (c) => {
    const [name, arg] = c.split(/:(.*)/s);
    if (name === "page") {
      const n = Number(arg);
      const rows = [];
      let pages = 0;
      for (;;) {
        const page = await api.requestBuilder().getAll().top(n).skip(pages * n).execute(dest);
        pages++;
        rows.push(...page.map(row));
        if (page.length < n) {
          return { pages, rows };
        }
        if (pages === 1000) {
          throw new Error(`still full pages of ${n} after ${pages} pages: $skip ignored?`);
        }
      }
    }
    if (name === "key") {
      return row(await api.requestBuilder().getByKey(arg).execute(dest));
    }
    if (name === "count") {
      return await api.requestBuilder().getAll().filter(s.STATUS.equals("PAID")).count().execute(dest);
    }
    if (filters[name]) {
      const rows = await api
        .requestBuilder()
        .getAll()
        .select(s.ORDER_ID)
        .filter(filters[name]())
        .orderBy(asc(s.ORDER_ID))
        .execute(dest);
      return rows.map((e) => e.orderId);
    }
    throw new Error(`unknown case ${c}`);
  };
  const out = {};
  for (const c of cases) {
    try {
      out[c] = await run(c);
    } catch (err) {
      out[c] = { error: failure(err) };
    }
  }
  return out;
}

main(process.argv.slice(2)).then(
  (out) => process.stdout.write(JSON.stringify(out) + "\n"),
  (err) => {
    process.stderr.write(String((err && err.stack) || err) + "\n");
    process.exitCode = 1;
  }
);
