"""ipywidgets forms for the write actions: one per action from the catalog, a gallery, multi-step helpers.

    form = library.form("create_board")       # Form: fields, preview(), submit(), confirm, output
    library.forms()                           # Gallery: every write action of the service
    toolkit.forms.MultipartUpload(library)    # helpers where one form is not enough

The client and the workspace know no screen: `Client.form` and `Client.forms` import this package
when they are called.
"""
from toolkit.connection.effects import affected_resources, board_cascade, loss
from toolkit.forms.asset_library_steps import AssetImport, MultipartUpload
from toolkit.forms.fields import MISSING, Field
from toolkit.forms.form import Form
from toolkit.forms.gallery import Gallery, write_actions
from toolkit.forms.lookups import LOOKUPS, Lookup
from toolkit.forms.steps import Steps
from toolkit.forms.translation_steps import Download, SubmissionWizard
from toolkit.forms.translation_work import HandBack, StartSubmission, phase_of_file

__all__ = ["LOOKUPS", "MISSING", "AssetImport", "Download", "Field", "Form", "Gallery", "HandBack", "Lookup",
           "MultipartUpload", "StartSubmission", "Steps", "SubmissionWizard", "affected_resources", "board_cascade",
           "loss", "phase_of_file", "write_actions"]
