#!/usr/bin/env node
// Probes of real OData consumers for the Go tests of package odata (conformance_test.go).
// Each command reads what the Go test hands it and prints one JSON value on stdout; the
// Go test makes the assertions.
//
//   probe.js csdl-schema FILE     validate CSDL JSON against odata-csdl's csdl.schema.json
//                                 with ajv: {"valid": bool, "errors": [...]}
//   probe.js xml2json FILE        CSDL XML converted by odata-csdl's xml2json: {"json", "messages"}
//   probe.js edmx FILE            what @sap-ux/edmx-parser reads from CSDL XML: entity types
//                                 with keys and properties, entity sets
//   probe.js client ROOT SET FILTER ORDERBY TOP
//                                 query an entity set with @odata/client (OData V4), with
//                                 $filter, $orderby ("FIELD asc|desc"), $top and $count:
//                                 {"count", "rows"}
"use strict";

const fs = require("node:fs");

async function main(argv) {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case "csdl-schema": {
      const Ajv = require("ajv");
      const schema = require("odata-csdl/schemas/csdl.schema.json");
      const ajv = new Ajv({ strict: false, allErrors: true });
      const validate = ajv.compile(schema);
      const valid = validate(JSON.parse(fs.readFileSync(args[0], "utf8")));
      return { valid, errors: validate.errors || [] };
    }
    case "xml2json": {
      const { xml2json } = require("odata-csdl");
      const messages = [];
      const json = xml2json(fs.readFileSync(args[0]), { messages });
      return { json, messages: messages.map((m) => m.message) };
    }
    case "edmx": {
      const { parse } = require("@sap-ux/edmx-parser");
      const schema = parse(fs.readFileSync(args[0], "utf8")).schema;
      return {
        namespace: schema.namespace,
        container: schema.entityContainer.name,
        entityTypes: schema.entityTypes.map((t) => ({
          name: t.fullyQualifiedName,
          keys: t.keys.map((k) => k.name),
          properties: t.entityProperties.map((p) => ({
            name: p.name,
            type: p.type,
            nullable: p.nullable,
          })),
        })),
        entitySets: schema.entitySets.map((s) => ({
          name: s.name,
          entityType: s.entityTypeName,
        })),
      };
    }
    case "client": {
      const [root, set, filter, orderby, top] = args;
      const { OData } = require("@odata/client");
      const client = OData.New4({ serviceEndpoint: root });
      const [field, order] = orderby.split(" ");
      const params = client
        .newParam()
        .filter(filter)
        .orderby(field, order)
        .top(Number(top))
        .count(true);
      const res = await client.newRequest({ collection: set, params });
      if (res.error) {
        throw new Error(JSON.stringify(res.error));
      }
      return { count: res["@odata.count"], rows: res.value };
    }
  }
  throw new Error(`unknown command ${cmd}`);
}

main(process.argv.slice(2)).then(
  (out) => process.stdout.write(JSON.stringify(out) + "\n"),
  (err) => {
    process.stderr.write(String((err && err.stack) || err) + "\n");
    process.exitCode = 1;
  }
);
