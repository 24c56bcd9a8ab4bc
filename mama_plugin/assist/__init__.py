"""The local generative model as co-author: narrative drafts and link suggestions.

It only proposes. Drafts are returned for review, never saved; suggested links wait as pending
until a person or Claude accepts them. Nothing here runs on the prompt path.
"""
