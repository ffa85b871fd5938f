package scimhttp

import (
	"slices"

	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"

	"github.com/kmkit/kmkit/scim"
)

var roleValues = []string{string(scim.RoleMember), string(scim.RoleAnalyst), string(scim.RoleAdmin)}

func roleAttribute(description string) schema.CoreAttribute {
	return schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
		CanonicalValues: roleValues,
		Description:     optional.NewString(description),
		Name:            "role",
	}))
}

// extensionSchema is the vendor extension of the User resource.
func extensionSchema() schema.Schema {
	return schema.Schema{
		ID:          scim.ExtensionSchema,
		Name:        optional.NewString("CelonisUser"),
		Description: optional.NewString("Team role and invitation of a user."),
		Attributes: []schema.CoreAttribute{
			roleAttribute("Role of the user in the team: MEMBER (the default), ANALYST or ADMIN."),
			schema.SimpleCoreAttribute(schema.SimpleBooleanParams(schema.BooleanParams{
				Description: optional.NewString("Whether an invitation e-mail is sent when the user is created. Accepts \"true\"/\"false\" strings too."),
				Name:        "sendEmailOnInvitation",
			})),
		},
	}
}

// enterpriseSchema is RFC 7643's enterprise User extension, which Entra ID's default
// attribute mappings send (department, employeeNumber, manager, ...).
func enterpriseSchema() schema.Schema { return schema.ExtensionEnterpriseUser() }

// userExtensions are the extensions of the User resource.
func userExtensions() []schema.Schema { return []schema.Schema{extensionSchema(), enterpriseSchema()} }

// userSchema is the core User schema.
func userSchema() schema.Schema { return schema.CoreUserSchema() }

// groupSchema is the core Group schema with the group's role added, and displayName
// unique on the server, as the stores enforce it (409 uniqueness) where RFC 7643's
// schema says none.
func groupSchema() schema.Schema {
	s := schema.CoreGroupSchema()
	attrs := slices.Clone(s.Attributes)
	for i, a := range attrs {
		if a.Name() == "displayName" {
			attrs[i] = schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
				Description: optional.NewString("A human-readable name for the Group, unique in the team ignoring case. REQUIRED."),
				Name:        "displayName",
				Required:    true,
				Uniqueness:  schema.AttributeUniquenessServer(),
			}))
		}
	}
	s.Attributes = append(attrs, roleAttribute("Role the group grants its members: MEMBER, ANALYST or ADMIN."))
	return s
}
