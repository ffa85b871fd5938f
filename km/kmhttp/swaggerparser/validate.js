// Validates OpenAPI documents (JSON or YAML files named on the command line) with
// @apidevtools/swagger-parser: the OpenAPI 3.0 schema, $refs, and the spec rules it checks
// beyond the schema. Prints one line per file; exits 1 when any file is invalid.
"use strict";
const SwaggerParser = require("@apidevtools/swagger-parser");

async function main(files) {
  let failed = 0;
  for (const file of files) {
    try {
      const api = await SwaggerParser.validate(file);
      console.log(`ok ${file}: ${api.info.title} ${api.openapi}, ${Object.keys(api.paths).length} paths`);
    } catch (err) {
      failed++;
      console.log(`invalid ${file}: ${err.message}`);
    }
  }
  return failed;
}

if (process.argv.length < 3) {
  console.error("usage: node validate.js FILE...");
  process.exit(2);
}
main(process.argv.slice(2)).then(
  (failed) => process.exit(failed ? 1 : 0),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
