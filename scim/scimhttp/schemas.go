package scimhttp

import (
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

// groupSchema is the core Group schema as this service has it: displayName unique on the
// server, as the stores enforce it (409 uniqueness) where RFC 7643's schema says none;
// members that are users only, as CheckMemberObject requires, where RFC 7643's may be
// groups too; and the group's role.
func groupSchema() schema.Schema {
	s := schema.CoreGroupSchema()
	s.Attributes = []schema.CoreAttribute{
		schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
			Description: optional.NewString("A human-readable name for the Group, unique in the team ignoring case. REQUIRED."),
			Name:        "displayName",
			Required:    true,
			Uniqueness:  schema.AttributeUniquenessServer(),
		})),
		schema.ComplexCoreAttribute(schema.ComplexParams{
			Description: optional.NewString("A list of members of the Group: users of the team."),
			MultiValued: true,
			Name:        "members",
			SubAttributes: []schema.SimpleParams{
				schema.SimpleStringParams(schema.StringParams{
					Description: optional.NewString("Identifier of the member of this Group: the id of a user."),
					Mutability:  schema.AttributeMutabilityImmutable(),
					Name:        "value",
				}),
				schema.SimpleReferenceParams(schema.ReferenceParams{
					Description:    optional.NewString("The URI of the user that is a member of this Group."),
					Mutability:     schema.AttributeMutabilityImmutable(),
					Name:           "$ref",
					ReferenceTypes: []schema.AttributeReferenceType{"User"},
				}),
				schema.SimpleStringParams(schema.StringParams{
					CanonicalValues: []string{"User"},
					Description:     optional.NewString("The type of the member: User."),
					Mutability:      schema.AttributeMutabilityImmutable(),
					Name:            "type",
				}),
				schema.SimpleStringParams(schema.StringParams{
					Description: optional.NewString("A human-readable name for the group member, primarily used for display purposes."),
					Mutability:  schema.AttributeMutabilityImmutable(),
					Name:        "display",
				}),
			},
		}),
		roleAttribute("Role the group grants its members: MEMBER, ANALYST or ADMIN."),
	}
	return s
}
